// Registers the @vscode/webview-ui-toolkit elements the panel's controls use (toolkit.ts creates
// them by tag name). dist/panel/toolkit.js, loaded after the first paint (plotlyLoader.ts): until then the elements are plain, styled
// placeholders (media/panel.css, :not(:defined)), and they upgrade in place when this runs.
import {
  provideVSCodeDesignSystem,
  vsCodeButton,
  vsCodeCheckbox,
  vsCodeDropdown,
  vsCodeOption,
} from '@vscode/webview-ui-toolkit';

provideVSCodeDesignSystem().register(vsCodeButton(), vsCodeCheckbox(), vsCodeDropdown(), vsCodeOption());
