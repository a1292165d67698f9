#!/usr/bin/python3
"""Chat-template fixtures and what Python's jinja2 renders of them, set up as transformers'
apply_chat_template(messages, add_generation_prompt=True, tokenize=False) sets it up
(src/transformers/utils/chat_template_utils.py): an ImmutableSandboxedEnvironment with trim_blocks
and lstrip_blocks, the loopcontrols extension, raise_exception and strftime_now as globals, a tojson
filter that keeps non-ASCII and does not escape HTML; rendered with messages, tools=None,
documents=None, add_generation_prompt and the tokenizer's named special tokens as text (an
AddedToken object contributes its content).

The templates below are written for these tests in the shapes chat models use — ChatML turns, Llama-3
header tokens with a date default, a default system message under a list of named templates, a
template that raises, one kept in chat_template.jinja — not copied from any model.

Each folder gets tokenizer_config.json (or chat_template.jinja); chatml and headers also get a small
byte-level tokenizer.json (one token per byte, no merges) in which the template's special tokens are
added tokens, so a test can check that each is encoded as one id. headers' post-processor adds
<|begin_of_text|> as Llama 3's does: a rendered template that writes it must not get it twice.

Writes test/fixtures/chat/<folder>/… and test/fixtures/chat/references.json.
Run: /usr/bin/python3 scripts/gen_chat_references.py
"""
import json
from datetime import datetime
from pathlib import Path

import jinja2
from jinja2.exceptions import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment

OUT = Path(__file__).resolve().parent.parent / 'test' / 'fixtures' / 'chat'
SPECIAL_TOKEN_NAMES = ['bos_token', 'eos_token', 'unk_token', 'sep_token', 'pad_token', 'cls_token', 'mask_token']
MESSAGES = ['  Is 2+2 "four"?\nAnswer like a café waiter.  ', 'hi', '<b>tags</b> & {{ braces }}']


def added(content):
    return {'__type': 'AddedToken', 'content': content, 'lstrip': False, 'normalized': False, 'rstrip': False, 'single_word': False, 'special': True}


CHATML = """{%- for message in messages %}
    {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\\n' }}
{%- endif %}
"""

HEADERS = """{{- bos_token }}
{%- if not date_string is defined %}
    {%- set date_string = "1 Mar 2025" %}
{%- endif %}
{{- '<|start_header_id|>system<|end_header_id|>\\n\\nToday is ' + date_string + '.<|eot_id|>' }}
{%- for message in messages %}
    {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + message['content'] | trim + '<|eot_id|>' }}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}
{%- endif %}
"""

SYSTEM_DEFAULT = """{% if messages[0]['role'] == 'system' %}
    {% set system = messages[0]['content'] %}
    {% set turns = messages[1:] %}
{% else %}
    {% set system = 'You answer in one short sentence.' %}
    {% set turns = messages %}
{% endif %}
{% set counter = namespace(users=0) %}
{{ bos_token }}<|system|>
{{ system }}{{ eos_token }}
{% for message in turns %}
    {% if message.role == 'user' %}{% set counter.users = counter.users + 1 %}{% endif %}
<|{{ message.role }}|>
{{ message.content }}{{ eos_token }}
{% endfor %}
{% if add_generation_prompt %}
<|assistant|> (turn {{ counter.users }})
{% endif %}
"""

TOOL_USE = """{{ bos_token }}<|tools|>{{ tools | tojson }}{% for message in messages %}<|{{ message.role }}|>{{ message.content }}{% endfor %}"""

RAISES = """{%- if messages[0].role != 'system' %}
    {{- raise_exception('This template wants a system message before the first user turn.') }}
{%- endif %}
{%- for message in messages %}{{ message.content }}{% endfor %}
"""

JINJA_FILE = """{% for message in messages %}
[{{ loop.index0 }}] {{ message.role | upper }}: {{ message.content | tojson }}
{% if loop.last and add_generation_prompt %}[{{ loop.index }}] ASSISTANT:{% endif %}
{% endfor %}"""

FOLDERS = {
    'chatml': {
        'config': {'chat_template': CHATML, 'eos_token': '<|im_end|>', 'pad_token': '<|endoftext|>', 'bos_token': None,
                   'additional_special_tokens': ['<|im_start|>', '<|im_end|>']},
        'added': ['<|endoftext|>', '<|im_start|>', '<|im_end|>'],
    },
    'headers': {
        'config': {'chat_template': HEADERS, 'bos_token': added('<|begin_of_text|>'), 'eos_token': added('<|eot_id|>')},
        'added': ['<|begin_of_text|>', '<|start_header_id|>', '<|end_header_id|>', '<|eot_id|>'],
        'bos': '<|begin_of_text|>',
    },
    'system-default': {
        'config': {'chat_template': [{'name': 'default', 'template': SYSTEM_DEFAULT}, {'name': 'tool_use', 'template': TOOL_USE}],
                   'bos_token': '<s>', 'eos_token': added('</s>'), 'unk_token': '<unk>'},
    },
    'raises': {'config': {'chat_template': RAISES, 'eos_token': '</s>'}},
    'jinja-file': {'config': {'eos_token': '</s>'}, 'jinja': JINJA_FILE},
}


def environment():
    def raise_exception(message):
        raise TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(format):
        return datetime.now().strftime(format)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=['jinja2.ext.loopcontrols'])
    env.filters['tojson'] = tojson
    env.globals['raise_exception'] = raise_exception
    env.globals['strftime_now'] = strftime_now
    return env


def token_text(token):
    return token['content'] if isinstance(token, dict) else token


def special_tokens_map(config):
    tokens = {name: token_text(config[name]) for name in SPECIAL_TOKEN_NAMES if config.get(name) is not None}
    if config.get('additional_special_tokens'):
        tokens['additional_special_tokens'] = [token_text(t) for t in config['additional_special_tokens']]
    return tokens


def default_template(config, jinja):
    if jinja is not None:
        return jinja
    template = config['chat_template']
    if isinstance(template, list):
        return {entry['name']: entry['template'] for entry in template}['default']
    return template


def byte_level_tokenizer(added_tokens, bos):
    """One token per byte in GPT-2's byte → character table; the added tokens after them."""
    printable = list(range(ord('!'), ord('~') + 1)) + list(range(ord('¡'), ord('¬') + 1)) + list(range(ord('®'), ord('ÿ') + 1))
    chars, extra = [], 0
    for byte in range(256):
        if byte in printable:
            chars.append(chr(byte))
        else:
            chars.append(chr(256 + extra))
            extra += 1
    vocab = {c: i for i, c in enumerate(chars)}
    added_list = [{'id': 256 + i, 'content': t, 'single_word': False, 'lstrip': False, 'rstrip': False, 'normalized': False, 'special': True}
                  for i, t in enumerate(added_tokens)]
    byte_level = {'add_prefix_space': False, 'trim_offsets': True, 'use_regex': True}
    post = {'type': 'ByteLevel', **byte_level, 'trim_offsets': False}
    if bos is not None:
        bos_id = 256 + added_tokens.index(bos)
        post = {'type': 'TemplateProcessing',
                'single': [{'SpecialToken': {'id': bos, 'type_id': 0}}, {'Sequence': {'id': 'A', 'type_id': 0}}],
                'pair': [{'SpecialToken': {'id': bos, 'type_id': 0}}, {'Sequence': {'id': 'A', 'type_id': 0}}, {'Sequence': {'id': 'B', 'type_id': 1}}],
                'special_tokens': {bos: {'id': bos, 'ids': [bos_id], 'tokens': [bos]}}}
    return {'version': '1.0', 'truncation': None, 'padding': None, 'added_tokens': added_list, 'normalizer': None,
            'pre_tokenizer': {'type': 'ByteLevel', **byte_level}, 'post_processor': post, 'decoder': {'type': 'ByteLevel', **byte_level},
            'model': {'type': 'BPE', 'dropout': None, 'unk_token': None, 'continuing_subword_prefix': '', 'end_of_word_suffix': '',
                      'fuse_unk': False, 'byte_fallback': False, 'vocab': vocab, 'merges': []}}


def write_json(path, value):
    path.write_text(json.dumps(value, indent=1, ensure_ascii=False) + '\n', encoding='utf-8')


def main():
    env = environment()
    references = {'jinja2': jinja2.__version__, 'messages': MESSAGES, 'folders': {}}
    for name, folder in FOLDERS.items():
        directory = OUT / name
        directory.mkdir(parents=True, exist_ok=True)
        config = folder['config']
        write_json(directory / 'tokenizer_config.json', config)
        if 'jinja' in folder:
            (directory / 'chat_template.jinja').write_text(folder['jinja'], encoding='utf-8')
        if 'added' in folder:
            write_json(directory / 'tokenizer.json', byte_level_tokenizer(folder['added'], folder.get('bos')))
        template = env.from_string(default_template(config, folder.get('jinja')))
        rendered = []
        for message in MESSAGES:
            try:
                rendered.append({'text': template.render(messages=[{'role': 'user', 'content': message}], tools=None, documents=None,
                                                         add_generation_prompt=True, **special_tokens_map(config))})
            except TemplateError as error:
                rendered.append({'error': str(error)})
        references['folders'][name] = rendered
    write_json(OUT / 'references.json', references)


if __name__ == '__main__':
    main()
