import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"

/**
 * No two modules of a folder may differ only in the case of their names or extensions (`ApiKeysPages.ts` beside
 * `apiKeysPages.tsx`): an import of `./apiKeysPages.js` is then resolved by the bundler to the other file, and the
 * build breaks on case-sensitive file systems and works on the others.
 */

const root = fileURLToPath(new URL("../..", import.meta.url))

const foldersOf = (dir: string): ReadonlyArray<string> => [
  dir,
  ...Fs.readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => foldersOf(Path.join(dir, entry.name)))
]

describe("module file names", () => {
  it("differ in more than case and extension within a folder", () => {
    const clashes = ["src", "test", "bench"].flatMap((top) =>
      foldersOf(Path.join(root, top)).flatMap((folder) => {
        const stems = Fs.readdirSync(folder)
          .filter((name) => /\.(ts|tsx)$/.test(name))
          .map((name) => name.replace(/\.(ts|tsx)$/, "").toLowerCase())
        return stems
          .filter((stem, index) => stems.indexOf(stem) !== index)
          .map((stem) => Path.relative(root, Path.join(folder, stem)))
      })
    )
    expect(clashes).toEqual([])
  })
})
