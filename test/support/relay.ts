import * as Net from "node:net"
import { Effect } from "effect"

/**
 * A TCP relay on a loopback port to `target`, which a test can cut (connections dropped, new ones
 * refused) and restore on the same port: a server going away and coming back.
 */
export const tcpRelay = (target: { readonly host: string; readonly port: number }) =>
  Effect.gen(function* () {
    const sockets = new Set<Net.Socket>()
    let server: Net.Server | undefined
    const listen = (port: number) =>
      Effect.async<number>((resume) => {
        server = Net.createServer((client) => {
          const upstream = Net.connect(target.port, target.host)
          for (const socket of [client, upstream]) {
            sockets.add(socket)
            socket.on("close", () => sockets.delete(socket))
            socket.on("error", () => {
              client.destroy()
              upstream.destroy()
            })
          }
          client.pipe(upstream).pipe(client)
        })
        server.listen(port, "127.0.0.1", () => resume(Effect.succeed((server!.address() as Net.AddressInfo).port)))
      })
    const cut = Effect.async<void>((resume) => {
      if (!server?.listening) return resume(Effect.void)
      server.close(() => resume(Effect.void))
      for (const socket of sockets) socket.destroy()
    })
    const port = yield* listen(0)
    yield* Effect.addFinalizer(() => cut)
    return { port, cut, restore: Effect.asVoid(listen(port)) }
  })
