/**
 * HttpApi documents its built-in `HttpApiDecodeError` as a 400 on every operation, but Ribbon never sends
 * that body: decoding failures are rendered in each line's own 400 format, which the line's groups
 * declare. This drops the built-in body so the document shows only what clients receive.
 */
export const describeRealErrors = (spec: Record<string, any>): Record<string, any> => {
  const isDecodeError = (schema: any) => schema?.$ref === "#/components/schemas/HttpApiDecodeError"
  for (const operations of Object.values<Record<string, any>>(spec.paths ?? {})) {
    for (const operation of Object.values<any>(operations)) {
      const badRequest = operation?.responses?.["400"]
      if (badRequest === undefined) continue
      for (const [contentType, media] of Object.entries<any>(badRequest.content ?? {})) {
        if (isDecodeError(media.schema)) delete badRequest.content[contentType]
        else if (Array.isArray(media.schema?.anyOf)) {
          const rest = media.schema.anyOf.filter((s: any) => !isDecodeError(s))
          media.schema = rest.length === 1 ? rest[0] : { ...media.schema, anyOf: rest }
        }
      }
      if (Object.keys(badRequest.content ?? {}).length === 0) delete operation.responses["400"]
    }
  }
  const schemas = spec.components?.schemas ?? {}
  delete schemas.HttpApiDecodeError
  if (!JSON.stringify(spec.paths).includes("#/components/schemas/Issue")) delete schemas.Issue
  return spec
}
