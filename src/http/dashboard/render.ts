import type { VNode } from "preact"
import { renderToString } from "preact-render-to-string"

/**
 * A dashboard page as HTML text (docs/decisions/0055-dashboard-renderer.md): JSX rendered by
 * preact-render-to-string, which escapes every text and attribute value unless a component asks otherwise
 * with `dangerouslySetInnerHTML` (only the layout's own style and script do).
 */
export const render = (node: VNode): string => `<!doctype html>${renderToString(node)}`
