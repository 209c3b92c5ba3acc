/**
 * The refusal page's names, shared by the modal server that writes the page, the build that
 * writes its script and the script (refused.ts) that reads its data block. No imports: the
 * server reads it without the page's code.
 */

/** The script's file in the build's root, served as /refused.js. */
export const REFUSAL_SCRIPT = 'refused.js'

/** The data block's id: the refused origin and the app, written by the modal server. */
export const REFUSAL_DATA_ID = 'latch-refusal'

export interface RefusalData {
  origin: string
  appId: string
}
