// What VS Code adds to a webview page: the theme's colours as CSS variables on <html> and a
// theme class on <body>. Values of VS Code's "Light Modern" and "Dark Modern" themes, for the
// variables the panel and the toolkit read (and "Dark High Contrast").
export type ThemeName = 'light' | 'dark' | 'high-contrast';

const COMMON = {
  '--vscode-font-family': "system-ui, 'Ubuntu', 'Droid Sans', sans-serif",
  '--vscode-font-size': '13px',
  '--vscode-editor-font-family': "'Droid Sans Mono', 'monospace', monospace",
};

const THEMES: Record<ThemeName, { bodyClass: string; variables: Record<string, string> }> = {
  light: {
    bodyClass: 'vscode-light',
    variables: {
      '--vscode-foreground': '#3b3b3b',
      '--vscode-editor-foreground': '#3b3b3b',
      '--vscode-editor-background': '#ffffff',
      '--vscode-editorWidget-background': '#f8f8f8',
      '--vscode-descriptionForeground': '#616161',
      '--vscode-panel-border': '#e5e5e5',
      '--vscode-focusBorder': '#005fb8',
      '--vscode-charts-blue': '#1a85ff',
      '--vscode-charts-red': '#e51400',
      '--vscode-button-background': '#005fb8',
      '--vscode-button-foreground': '#ffffff',
      '--vscode-button-hoverBackground': '#0258a8',
      '--vscode-button-secondaryBackground': '#e5e5e5',
      '--vscode-button-secondaryForeground': '#3b3b3b',
      '--vscode-button-secondaryHoverBackground': '#cccccc',
      '--vscode-dropdown-background': '#ffffff',
      '--vscode-dropdown-border': '#cecece',
      '--vscode-dropdown-foreground': '#3b3b3b',
      '--vscode-checkbox-background': '#f8f8f8',
      '--vscode-checkbox-border': '#cecece',
      '--vscode-checkbox-foreground': '#3b3b3b',
      '--vscode-editorHoverWidget-background': '#f8f8f8',
      '--vscode-editorHoverWidget-border': '#c8c8c8',
      '--vscode-editorWarning-foreground': '#bf8803',
    },
  },
  dark: {
    bodyClass: 'vscode-dark',
    variables: {
      '--vscode-foreground': '#cccccc',
      '--vscode-editor-foreground': '#cccccc',
      '--vscode-editor-background': '#1f1f1f',
      '--vscode-editorWidget-background': '#202020',
      '--vscode-descriptionForeground': '#9d9d9d',
      '--vscode-panel-border': '#2b2b2b',
      '--vscode-focusBorder': '#0078d4',
      '--vscode-charts-blue': '#3794ff',
      '--vscode-charts-red': '#f14c4c',
      '--vscode-button-background': '#0078d4',
      '--vscode-button-foreground': '#ffffff',
      '--vscode-button-hoverBackground': '#026ec1',
      '--vscode-button-secondaryBackground': '#313131',
      '--vscode-button-secondaryForeground': '#cccccc',
      '--vscode-button-secondaryHoverBackground': '#3c3c3c',
      '--vscode-dropdown-background': '#313131',
      '--vscode-dropdown-border': '#3c3c3c',
      '--vscode-dropdown-foreground': '#cccccc',
      '--vscode-checkbox-background': '#313131',
      '--vscode-checkbox-border': '#3c3c3c',
      '--vscode-checkbox-foreground': '#cccccc',
      '--vscode-editorHoverWidget-background': '#202020',
      '--vscode-editorHoverWidget-border': '#454545',
      '--vscode-editorWarning-foreground': '#cca700',
    },
  },
  'high-contrast': {
    bodyClass: 'vscode-high-contrast',
    variables: {
      '--vscode-foreground': '#ffffff',
      '--vscode-editor-foreground': '#ffffff',
      '--vscode-editor-background': '#000000',
      '--vscode-editorWidget-background': '#0c141f',
      '--vscode-descriptionForeground': '#ffffff',
      '--vscode-panel-border': '#6fc3df',
      '--vscode-focusBorder': '#f38518',
      '--vscode-contrastBorder': '#6fc3df',
      '--vscode-contrastActiveBorder': '#f38518',
      '--vscode-charts-blue': '#3794ff',
      '--vscode-charts-red': '#f48771',
      '--vscode-button-background': '#000000',
      '--vscode-button-foreground': '#ffffff',
      '--vscode-button-border': '#6fc3df',
      '--vscode-button-secondaryBackground': '#000000',
      '--vscode-button-secondaryForeground': '#ffffff',
      '--vscode-dropdown-background': '#000000',
      '--vscode-dropdown-border': '#6fc3df',
      '--vscode-dropdown-foreground': '#ffffff',
      '--vscode-checkbox-background': '#000000',
      '--vscode-checkbox-border': '#6fc3df',
      '--vscode-checkbox-foreground': '#ffffff',
      '--vscode-editorHoverWidget-background': '#0c141f',
      '--vscode-editorHoverWidget-border': '#6fc3df',
      '--vscode-editorWarning-foreground': '#fff',
    },
  },
};

/** The page's HTML as VS Code would serve it in this theme. */
export function themed(html: string, theme: ThemeName): string {
  const { bodyClass, variables } = THEMES[theme];
  const style = Object.entries({ ...COMMON, ...variables }).map(([name, value]) => `${name}: ${value}`).join('; ');
  return html.replace('<html lang="en">', `<html lang="en" style="${style.replace(/"/g, '&quot;')}">`).replace('<body ', `<body class="${bodyClass}" `);
}
