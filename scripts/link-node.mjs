// Makes node_modules/.bin/node the Node.js that package.json's optionalDependencies brought for this
// platform (docs/decisions/0053-node-24-brought-by-the-project.md), so that every npm script runs on it.
// npm links it itself, but npm 10 (the one Node.js 20 ships) then deletes the link again while it drops
// the other platforms' packages, whose bin has the same name (npm/cli#4362). `prepare` runs this after
// npm is done; it changes nothing when the link is already right, and runs on any Node.js.
import * as Fs from "node:fs"
import * as Path from "node:path"

const readLink = (path) => {
  try {
    return Fs.readlinkSync(path)
  } catch {
    return undefined
  }
}

const packageJson = JSON.parse(Fs.readFileSync("package.json", "utf8"))
const builds = Object.keys(packageJson.optionalDependencies ?? {}).flatMap((name) => {
  const manifest = Path.join("node_modules", name, "package.json")
  if (!Fs.existsSync(manifest)) return []
  const bin = JSON.parse(Fs.readFileSync(manifest, "utf8")).bin
  const node = typeof bin === "object" && bin !== null ? bin.node : undefined
  return typeof node === "string" ? [Path.join("node_modules", name, node)] : []
})

if (builds.length === 0) {
  console.warn(
    `No Node.js build of package.json's optionalDependencies fits ${process.platform}-${process.arch}: ` +
      `npm scripts run on this machine's node, ${process.version}.`
  )
} else {
  const link = Path.join("node_modules", ".bin", "node")
  const target = Path.relative(Path.dirname(link), builds[0])
  if (readLink(link) !== target) {
    Fs.mkdirSync(Path.dirname(link), { recursive: true })
    Fs.rmSync(link, { force: true })
    Fs.symlinkSync(target, link)
  }
}
