import * as Net from "node:net"
import { host } from "./support.js"

/**
 * A TCP relay on a loopback port, for the soak's faults and its load balancer. Each connection it accepts
 * goes to the next of its upstreams in turn; an upstream that refuses the connection is skipped (as a load
 * balancer skips an instance that is down), and when every one refuses, the client's connection is closed.
 *
 * `refuse()` is an outage as the instances see it: the port stops listening (new connections get
 * ECONNREFUSED) and every relayed connection is cut at once, both sides, as when a server goes away.
 * `accept()` listens again on the same port.
 */
export interface Relay {
  readonly port: number
  /** Connections relayed now. */
  readonly open: () => number
  readonly refuse: () => Promise<void>
  readonly accept: () => Promise<void>
  readonly close: () => Promise<void>
}

export interface Upstream {
  readonly host: string
  readonly port: number
}

const listen = (server: Net.Server, port: number) =>
  new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, host, () => {
      server.off("error", reject)
      resolve()
    })
  })

const stopListening = (server: Net.Server) =>
  new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()))

export const relay = async (upstreams: ReadonlyArray<Upstream>, port = 0): Promise<Relay> => {
  if (upstreams.length === 0) throw new Error("relay: no upstream")
  const pairs = new Set<{ readonly client: Net.Socket; upstream?: Net.Socket }>()
  let next = 0

  const connectUpstream = (tried: number, onConnected: (socket: Net.Socket) => void, onRefused: () => void) => {
    if (tried >= upstreams.length) return onRefused()
    const target = upstreams[next++ % upstreams.length]!
    const socket = Net.connect(target.port, target.host)
    const refused = () => {
      socket.destroy()
      connectUpstream(tried + 1, onConnected, onRefused)
    }
    socket.once("error", refused)
    socket.setTimeout(5_000, refused)
    socket.once("connect", () => {
      socket.off("error", refused)
      socket.setTimeout(0)
      onConnected(socket)
    })
  }

  const server = Net.createServer((client) => {
    const pair: { readonly client: Net.Socket; upstream?: Net.Socket } = { client }
    pairs.add(pair)
    client.pause()
    const end = () => {
      pairs.delete(pair)
      client.destroy()
      pair.upstream?.destroy()
    }
    client.on("error", end)
    client.on("close", end)
    connectUpstream(
      0,
      (upstream) => {
        if (client.destroyed) return upstream.destroy()
        pair.upstream = upstream
        upstream.on("error", end)
        upstream.on("close", end)
        client.pipe(upstream)
        upstream.pipe(client)
        client.resume()
      },
      end
    )
  })
  await listen(server, port)
  const bound = (server.address() as Net.AddressInfo).port

  return {
    port: bound,
    open: () => pairs.size,
    refuse: async () => {
      const closed = stopListening(server)
      for (const pair of [...pairs]) {
        pair.client.destroy()
        pair.upstream?.destroy()
      }
      pairs.clear()
      await closed
    },
    accept: async () => {
      if (!server.listening) await listen(server, bound)
    },
    close: async () => {
      const closed = stopListening(server)
      for (const pair of pairs) {
        pair.client.destroy()
        pair.upstream?.destroy()
      }
      await closed
    }
  }
}
