import { Ajv2020 } from "ajv/dist/2020.js"
import ajvFormats from "ajv-formats"

/**
 * Ajv (JSON Schema 2020-12) over a served OpenAPI document: `schema(pointer)` compiles the schema at a JSON
 * pointer into the document (`#/components/schemas/Checkout`, or an operation's response schema), with
 * `$ref`s into the document resolved.
 */
export const documentValidator = (document: Record<string, any>) => {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  ajvFormats.default(ajv)
  ajv.addSchema({ ...document, $id: "openapi" })
  return {
    ajv,
    schema: (pointer: string) => {
      const validate = ajv.getSchema(`openapi${pointer}`)
      if (validate === undefined) throw new Error(`No schema at ${pointer}`)
      return validate
    }
  }
}
