import * as Http from "node:http"
import type * as Https from "node:https"

/**
 * Answers a client that half-closes its connection once its request is sent (`socket.end(request)`, legal
 * HTTP/1.1). By default Node's HTTP server takes the client's FIN for an abort: it ends the request and
 * closes the connection, and the platform interrupts the request's fiber unanswered. With
 * `httpAllowHalfOpen` (a property of Node's HTTP and HTTPS servers, false unless set) the response is sent
 * and the connection closed after it; a connection the client half-closes while idle is closed at once, as
 * before.
 */
export const answeringHalfClosed = <S extends Http.Server | Https.Server>(server: S): S => {
  ;(server as S & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true
  return server
}

/** Node's HTTP server as Ribbon's listeners use it. */
export const httpListener = () => answeringHalfClosed(Http.createServer())
