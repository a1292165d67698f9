import { TensorReadError } from './tensor';

// A pickle *reader*, not an unpickler: it walks the opcodes a PyTorch state dict is made of and
// builds plain data from them. Nothing is ever called or imported. A global is looked up in a
// fixed table of what tensor state dicts use (the tensor rebuild functions, storage types,
// OrderedDict); any other global — `os.system`, `builtins.eval`, a user's class — is refused by
// name before anything else is read, and so are the opcodes that build arbitrary objects
// (INST, OBJ, NEWOBJ). Every length is checked against the bytes left, so a truncated or lying
// pickle ends in an error, and memory stays proportional to the pickle's size.

/** A storage a tensor views: `data/<key>` in the checkpoint's zip. */
export interface PickledStorage {
  kind: 'storage';
  dtype: StorageDType;
  key: string;
  numel: number;
}

/** `torch._utils._rebuild_tensor_v2(storage, offset, size, stride, …)`, not yet read. */
export interface PickledTensor {
  kind: 'tensor';
  storage: PickledStorage;
  offset: number;
  shape: number[];
  strides: number[];
}

export class PickledTuple {
  constructor(readonly items: PickleValue[]) {}
}

/** A global from the allowed table (what it stands for is decided where it is used). */
class AllowedGlobal {
  constructor(readonly name: string) {}
}

export type PickleValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | Uint8Array
  | PickleValue[]
  | PickledTuple
  | Map<PickleValue, PickleValue>
  | PickledTensor
  | PickledStorage
  | AllowedGlobal;

export type StorageDType = 'float16' | 'bfloat16' | 'float32' | 'float64' | 'int8' | 'int16' | 'int32' | 'int64' | 'uint8' | 'bool';

const STORAGE_TYPES: Record<string, StorageDType> = {
  HalfStorage: 'float16',
  BFloat16Storage: 'bfloat16',
  FloatStorage: 'float32',
  DoubleStorage: 'float64',
  CharStorage: 'int8',
  ShortStorage: 'int16',
  IntStorage: 'int32',
  LongStorage: 'int64',
  ByteStorage: 'uint8',
  BoolStorage: 'bool',
};

/** Every global a tensor state dict needs. */
const ALLOWED_GLOBALS = new Set([
  'collections.OrderedDict',
  'torch._utils._rebuild_tensor',
  'torch._utils._rebuild_tensor_v2',
  'torch._utils._rebuild_parameter',
  'torch._utils._rebuild_parameter_with_state',
  ...Object.keys(STORAGE_TYPES).map((name) => `torch.${name}`),
]);

class Mark {}
const MARK = new Mark();

export function readPickle(bytes: Uint8Array, where: string): PickleValue {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const stack: (PickleValue | Mark)[] = [];
  const memo = new Map<number, PickleValue>();
  let at = 0;

  const fail = (message: string, code = 'pickle-unreadable'): never => {
    throw new TensorReadError(`${where}: ${message}`, code);
  };
  const need = (count: number): number => {
    if (count < 0 || at + count > bytes.length) fail(`the pickle ends inside an opcode at byte ${at}.`, 'tensor-truncated');
    const start = at;
    at += count;
    return start;
  };
  const u8 = () => bytes[need(1)];
  const u16 = () => view.getUint16(need(2), true);
  const u32 = () => view.getUint32(need(4), true);
  const i32 = () => view.getInt32(need(4), true);
  const u64 = () => {
    const value = view.getBigUint64(need(8), true);
    if (value > BigInt(bytes.length)) fail('a length runs past the end of the pickle.', 'tensor-truncated');
    return Number(value);
  };
  const text = (length: number, encoding = 'utf-8') => {
    const start = need(length);
    return new TextDecoder(encoding).decode(bytes.subarray(start, start + length));
  };
  const line = () => {
    const end = bytes.indexOf(0x0a, at);
    if (end === -1) fail('the pickle ends inside a text line.', 'tensor-truncated');
    const value = text(end - at, 'latin1');
    at++; // the newline
    return value;
  };
  const pop = (): PickleValue => {
    const value = stack.pop();
    if (value === undefined || value instanceof Mark) return fail(`an opcode at byte ${at} found nothing to take.`);
    return value;
  };
  const top = (): PickleValue => {
    const value = stack[stack.length - 1];
    if (value === undefined || value instanceof Mark) return fail(`an opcode at byte ${at} found nothing to work on.`);
    return value;
  };
  const popMark = (): PickleValue[] => {
    let index = stack.length - 1;
    while (index >= 0 && !(stack[index] instanceof Mark)) index--;
    if (index < 0) fail(`an opcode at byte ${at} has no MARK before it.`);
    const items = stack.splice(index) as PickleValue[];
    items.shift();
    return items;
  };
  const global = (module: string, name: string): AllowedGlobal => {
    const full = `${module}.${name}`;
    if (!ALLOWED_GLOBALS.has(full)) {
      fail(`the pickle asks for \`${full}\`, which a tensor state dict never needs; it is not read (unpickling can run code, and Attention Lens only reads tensors).`, 'pickle-refused');
    }
    return new AllowedGlobal(full);
  };
  const setItems = (target: PickleValue, items: PickleValue[]) => {
    if (!(target instanceof Map)) return fail('SETITEMS on something that is not a dict.');
    for (let i = 0; i + 1 < items.length; i += 2) target.set(items[i], items[i + 1]);
  };

  for (;;) {
    const opcode = u8();
    switch (opcode) {
      case 0x80: // PROTO
        if (u8() > 5) fail('pickle protocol above 5.');
        break;
      case 0x95: // FRAME: a length hint only
        u64();
        break;
      case 0x2e: // STOP
        return pop();
      case 0x28: // MARK
        stack.push(MARK);
        break;
      case 0x30: // POP
        stack.pop();
        break;
      case 0x31: // POP_MARK
        popMark();
        break;
      case 0x32: // DUP
        stack.push(top());
        break;
      case 0x4e: // NONE
        stack.push(null);
        break;
      case 0x88: // NEWTRUE
        stack.push(true);
        break;
      case 0x89: // NEWFALSE
        stack.push(false);
        break;
      case 0x4a: // BININT
        stack.push(i32());
        break;
      case 0x4b: // BININT1
        stack.push(u8());
        break;
      case 0x4d: // BININT2
        stack.push(u16());
        break;
      case 0x49: {
        // INT (text): also True/False as 01/00
        const value = line();
        stack.push(value === '01' ? true : value === '00' ? false : Number.parseInt(value, 10));
        break;
      }
      case 0x8a: // LONG1
      case 0x8b: {
        // LONG4
        const length = opcode === 0x8a ? u8() : u32();
        const start = need(length);
        let value = 0n;
        for (let i = length - 1; i >= 0; i--) value = (value << 8n) | BigInt(bytes[start + i]);
        if (length > 0 && bytes[start + length - 1] & 0x80) value -= 1n << BigInt(8 * length);
        stack.push(value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value);
        break;
      }
      case 0x47: // BINFLOAT (big-endian)
        stack.push(view.getFloat64(need(8), false));
        break;
      case 0x58: // BINUNICODE
        stack.push(text(u32()));
        break;
      case 0x8c: // SHORT_BINUNICODE
        stack.push(text(u8()));
        break;
      case 0x8d: // BINUNICODE8
        stack.push(text(u64()));
        break;
      case 0x55: // SHORT_BINSTRING
        stack.push(text(u8(), 'latin1'));
        break;
      case 0x54: // BINSTRING
        stack.push(text(u32(), 'latin1'));
        break;
      case 0x43: // SHORT_BINBYTES
      case 0x42: // BINBYTES
      case 0x8e: {
        // BINBYTES8
        const length = opcode === 0x43 ? u8() : opcode === 0x42 ? u32() : u64();
        const start = need(length);
        stack.push(bytes.slice(start, start + length));
        break;
      }
      case 0x29: // EMPTY_TUPLE
        stack.push(new PickledTuple([]));
        break;
      case 0x74: // TUPLE
        stack.push(new PickledTuple(popMark()));
        break;
      case 0x85: // TUPLE1
      case 0x86: // TUPLE2
      case 0x87: {
        // TUPLE3
        const items = Array.from({ length: opcode - 0x84 }, pop).reverse();
        stack.push(new PickledTuple(items));
        break;
      }
      case 0x5d: // EMPTY_LIST
        stack.push([]);
        break;
      case 0x6c: // LIST
        stack.push(popMark());
        break;
      case 0x61: {
        // APPEND
        const item = pop();
        const list = top();
        if (!Array.isArray(list)) fail('APPEND to something that is not a list.');
        (list as PickleValue[]).push(item);
        break;
      }
      case 0x65: {
        // APPENDS
        const items = popMark();
        const list = top();
        if (!Array.isArray(list)) fail('APPENDS to something that is not a list.');
        for (const item of items) (list as PickleValue[]).push(item);
        break;
      }
      case 0x7d: // EMPTY_DICT
        stack.push(new Map());
        break;
      case 0x64: {
        // DICT
        const dict = new Map<PickleValue, PickleValue>();
        setItems(dict, popMark());
        stack.push(dict);
        break;
      }
      case 0x73: {
        // SETITEM
        const value = pop();
        const key = pop();
        setItems(top(), [key, value]);
        break;
      }
      case 0x75: {
        // SETITEMS
        const items = popMark();
        setItems(top(), items);
        break;
      }
      case 0x71: // BINPUT
        memo.set(u8(), top());
        break;
      case 0x72: // LONG_BINPUT
        memo.set(u32(), top());
        break;
      case 0x70: // PUT (text)
        memo.set(Number.parseInt(line(), 10), top());
        break;
      case 0x94: // MEMOIZE
        memo.set(memo.size, top());
        break;
      case 0x68: // BINGET
      case 0x6a: // LONG_BINGET
      case 0x67: {
        // GET (text)
        const index = opcode === 0x68 ? u8() : opcode === 0x6a ? u32() : Number.parseInt(line(), 10);
        if (!memo.has(index)) fail(`memo entry ${index} is used before it is stored.`);
        stack.push(memo.get(index) as PickleValue);
        break;
      }
      case 0x63: {
        // GLOBAL 'module\nname\n'
        const module = line();
        stack.push(global(module, line()));
        break;
      }
      case 0x93: {
        // STACK_GLOBAL
        const name = pop();
        const module = pop();
        if (typeof module !== 'string' || typeof name !== 'string') fail('STACK_GLOBAL without a module and a name.');
        stack.push(global(module as string, name as string));
        break;
      }
      case 0x51: // BINPERSID
        stack.push(persistent(pop(), fail));
        break;
      case 0x52: {
        // REDUCE
        const args = pop();
        const callable = pop();
        if (!(callable instanceof AllowedGlobal) || !(args instanceof PickledTuple)) return fail(`REDUCE at byte ${at - 1} applies something that is not an allowed global.`);
        stack.push(rebuild(callable.name, args.items, fail));
        break;
      }
      case 0x62: {
        // BUILD: a state dict's `_metadata` (OrderedDict.__dict__) — kept out of the tensors.
        pop();
        const target = top();
        if (!(target instanceof Map) && !isTensor(target)) fail('BUILD on something that is neither a dict nor a tensor.');
        break;
      }
      case 0x69: // INST
      case 0x6f: // OBJ
      case 0x81: // NEWOBJ
      case 0x92: // NEWOBJ_EX
        return fail(`the pickle builds an arbitrary object (opcode 0x${opcode.toString(16)}), which a tensor state dict never does; it is not read.`, 'pickle-refused');
      default:
        return fail(`opcode 0x${opcode.toString(16)} at byte ${at - 1} is not one a tensor state dict uses; the pickle is not read.`, 'pickle-refused');
    }
  }
}

function isTensor(value: PickleValue): value is PickledTensor {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Map) && (value as { kind?: string }).kind === 'tensor';
}

/** `('storage', torch.FloatStorage, '0', 'cpu', 48)` → the storage `data/0` of 48 floats. */
function persistent(id: PickleValue, fail: (message: string) => never): PickledStorage {
  if (!(id instanceof PickledTuple) || id.items[0] !== 'storage') return fail('a persistent id that is not a tensor storage.');
  const [, type, key, , numel] = id.items;
  if (!(type instanceof AllowedGlobal) || !type.name.startsWith('torch.') || !(type.name.slice(6) in STORAGE_TYPES)) return fail('a storage of an unknown type.');
  if (typeof key !== 'string' || !/^\w+$/.test(key)) return fail('a storage without a plain key.');
  if (typeof numel !== 'number' || !Number.isSafeInteger(numel) || numel < 0) return fail(`storage ${key} without an element count.`);
  return { kind: 'storage', dtype: STORAGE_TYPES[type.name.slice(6)], key, numel };
}

function rebuild(name: string, args: PickleValue[], fail: (message: string) => never): PickleValue {
  switch (name) {
    case 'collections.OrderedDict':
      if (args.length !== 0) fail('OrderedDict built from arguments.');
      return new Map();
    case 'torch._utils._rebuild_tensor':
    case 'torch._utils._rebuild_tensor_v2': {
      const [storage, offset, size, stride] = args;
      if (typeof storage !== 'object' || storage === null || (storage as PickledStorage).kind !== 'storage') return fail('a tensor rebuilt without a storage.');
      const shape = intTuple(size);
      const strides = intTuple(stride);
      if (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0 || !shape || !strides || shape.length !== strides.length) {
        return fail('a tensor rebuilt without an offset, a size and matching strides.');
      }
      return { kind: 'tensor', storage: storage as PickledStorage, offset, shape, strides };
    }
    case 'torch._utils._rebuild_parameter':
    case 'torch._utils._rebuild_parameter_with_state':
      if (!isTensor(args[0] ?? null)) fail('a parameter rebuilt from something that is not a tensor.');
      return args[0];
    default:
      return fail(`\`${name}\` is not called by a tensor state dict.`);
  }
}

function intTuple(value: PickleValue | undefined): number[] | undefined {
  if (!(value instanceof PickledTuple)) return undefined;
  return value.items.every((item) => typeof item === 'number' && Number.isSafeInteger(item)) ? (value.items as number[]) : undefined;
}
