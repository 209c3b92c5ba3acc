/** The one-line script (`sdk.js`): reads its own tag and installs `window.latch`. */
import { installFromScript } from './scriptTag.ts'

installFromScript(document.currentScript)
