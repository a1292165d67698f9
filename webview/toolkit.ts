// Every use of @vscode/webview-ui-toolkit lives here and in toolkitElements.ts (which registers
// the elements, loaded after the first paint): the toolkit is no longer maintained, and replacing
// it must mean rewriting these two modules. Each factory returns a labelled control.

export interface Choice {
  value: string;
  label: string;
}

let nextId = 0;

/** A dropdown with a visible label; `onChange` receives the chosen value. */
export function dropdown(label: string, choices: Choice[], value: string, onChange: (value: string) => void): HTMLElement {
  const wrapper = document.createElement('div');
  wrapper.className = 'control';
  const id = `control-${nextId++}`;
  const caption = document.createElement('label');
  caption.htmlFor = id;
  caption.id = `${id}-label`;
  caption.textContent = label;
  const select = document.createElement('vscode-dropdown') as HTMLElement & { value: string };
  select.id = id;
  select.setAttribute('aria-labelledby', caption.id);
  select.dataset.control = label;
  for (const choice of choices) {
    const option = document.createElement('vscode-option') as HTMLElement & { value: string };
    option.setAttribute('value', choice.value);
    option.textContent = choice.label;
    if (choice.value === value) option.setAttribute('selected', '');
    select.append(option);
  }
  select.addEventListener('change', () => {
    if (select.value !== value) onChange(select.value);
  });
  wrapper.append(caption, select);
  return wrapper;
}

export function checkbox(label: string, checked: boolean, onChange: (checked: boolean) => void): HTMLElement {
  const box = document.createElement('vscode-checkbox') as HTMLElement & { checked: boolean };
  box.textContent = label;
  box.dataset.control = label;
  if (checked) box.setAttribute('checked', '');
  box.addEventListener('change', () => {
    if (box.checked !== checked) onChange(box.checked);
  });
  return box;
}

export function button(
  label: string,
  onClick: () => void,
  options: { primary?: boolean; title?: string; pressed?: boolean } = {},
): HTMLElement {
  const element = document.createElement('vscode-button');
  element.textContent = label;
  element.setAttribute('appearance', options.primary ? 'primary' : 'secondary');
  if (options.title) element.title = options.title;
  if (options.pressed !== undefined) element.setAttribute('aria-pressed', String(options.pressed));
  element.addEventListener('click', onClick);
  return element;
}
