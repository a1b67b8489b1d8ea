import { Schema } from "effect"

/**
 * A query-string integer from `min` to `max`: digits on the wire, a number to the handler and to the derived
 * client, and `integer` in the OpenAPI document, so generated clients take numbers as well.
 */
export const queryInt = (options: { readonly min: number; readonly max: number; readonly description: string }) =>
  Schema.compose(
    Schema.String.pipe(Schema.pattern(/^\d{1,15}$/)),
    Schema.NumberFromString.pipe(
      Schema.int(),
      Schema.filter(
        (n) => (n >= options.min && n <= options.max) || `Expected an integer from ${options.min} to ${options.max}`
      )
    )
  ).annotations({
    jsonSchema: { type: "integer", minimum: options.min, maximum: options.max, description: options.description }
  })
