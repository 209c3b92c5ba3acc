/** The one-line script (`sdk.js`): reads its own tag and installs `window.latch`. */
import { installFromScript } from './script-tag.ts'

installFromScript(document.currentScript)
