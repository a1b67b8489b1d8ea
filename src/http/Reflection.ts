import { HttpApi, type HttpApiEndpoint, type HttpApiGroup } from "@effect/platform"
import type { Context } from "effect"

/**
 * Every endpoint of an HttpApi with its merged annotations (group and endpoint) and its middleware, read off
 * the definition once per API. The bearer middleware, the connector manifest, the API-key middleware and
 * docs/permissions.md all read the operations' declarations from here, so what is enforced is what is
 * published.
 */
export interface EndpointMeta {
  readonly group: string
  readonly endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
  readonly annotations: Context.Context<never>
  /** Tested for membership only (`middleware.has(Bearer)`), so of any tag. */
  readonly middleware: ReadonlySet<unknown>
}

const reflected = new WeakMap<object, ReadonlyArray<EndpointMeta>>()

export const endpointsOf = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>
): ReadonlyArray<EndpointMeta> => {
  const known = reflected.get(api)
  if (known !== undefined) return known
  const endpoints: Array<EndpointMeta> = []
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ group, endpoint, mergedAnnotations, middleware }) => {
      endpoints.push({
        group: group.identifier,
        // reflect types the endpoint with its schemas erased; it is the endpoint as defined, with them.
        endpoint: endpoint as unknown as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps,
        annotations: mergedAnnotations,
        middleware
      })
    }
  })
  reflected.set(api, endpoints)
  return endpoints
}
