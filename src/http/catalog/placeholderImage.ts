import { createHash } from "node:crypto"

/**
 * The catalog's images: an SVG card per image path, with the product's title (or the collection's name)
 * and the image's own name ("2", "cream"), in colours derived from the path. The catalog is synthetic,
 * so its images are drawn rather than stored; every URL in a response resolves, and a path always draws
 * the same picture.
 */

const escapeXml = (text: string) =>
  text.replace(/[<>&"']/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c]!)

/** Splits a title into lines of at most `width` characters, at spaces. */
const wrap = (text: string, width: number): ReadonlyArray<string> =>
  text.split(/\s+/).reduce<Array<string>>((lines, word) => {
    const last = lines[lines.length - 1]
    if (last !== undefined && `${last} ${word}`.length <= width) lines[lines.length - 1] = `${last} ${word}`
    else lines.push(word)
    return lines
  }, [])

export const placeholderImage = (options: {
  readonly path: string
  readonly title: string
  readonly label: string
}) => {
  const hue = createHash("sha256").update(options.path).digest().readUInt16BE(0) % 360
  const lines = wrap(options.title, 18).slice(0, 4)
  const top = 400 - ((lines.length - 1) * 64) / 2
  const text = lines
    .map((line, i) => `<text x="400" y="${top + i * 64}" font-size="52">${escapeXml(line)}</text>`)
    .join("")
  return `<svg xmlns="http://www.w3.org/2000/svg" width="800" height="800" viewBox="0 0 800 800" role="img" aria-label="${escapeXml(options.title)}">
<rect width="800" height="800" fill="hsl(${hue} 45% 88%)"/>
<circle cx="400" cy="400" r="300" fill="hsl(${hue} 40% 78%)"/>
<g font-family="Georgia, serif" fill="hsl(${hue} 50% 22%)" text-anchor="middle" dominant-baseline="middle">${text}</g>
<text x="400" y="740" font-family="Helvetica, sans-serif" font-size="28" fill="hsl(${hue} 30% 35%)" text-anchor="middle">${escapeXml(options.label)}</text>
</svg>`
}
