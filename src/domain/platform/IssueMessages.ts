import { SchemaAST as AST, Effect, Option, type ParseResult } from "effect"

/**
 * Plain-words messages for a failed decoding: each failing field with the rule it breaks ("must be at least
 * 0", "must be at most 64 characters", "must be one of email, sms"). Effect's own formatters describe a
 * refinement by its `description` annotation, which Ribbon writes for the OpenAPI document ("In minor units
 * of the billing currency"), so their messages read as nonsense; the rule is read from the refinement's
 * JSON Schema annotation instead, which every built-in filter carries. A schema's own `message` annotation,
 * or the message a filter returns, is kept as written.
 */
export interface PlainIssue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** `items.0.quantity` → `items[0].quantity`. */
export const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (out, key) => (typeof key === "number" ? `${out}[${key}]` : out === "" ? String(key) : `${out}.${String(key)}`),
    ""
  )

/** Every failing field of a parse issue, in the order the schema checked them. */
export const plainIssues = (issue: ParseResult.ParseIssue): Array<PlainIssue> => walk(issue, [])

const walk = (issue: ParseResult.ParseIssue, path: ReadonlyArray<PropertyKey>): Array<PlainIssue> => {
  const at = (message: string) => [{ path, message }]
  if (issue._tag === "Pointer") {
    return walk(issue.issue, [...path, ...(Array.isArray(issue.path) ? issue.path : [issue.path])])
  }
  const annotated = messageAnnotation(issue)
  if (annotated !== undefined) return at(annotated)
  switch (issue._tag) {
    case "Missing":
      return at("is missing")
    case "Unexpected":
      return at(issue.message ?? "is not a known field")
    case "Forbidden":
      return at(issue.message ?? "could not be checked")
    case "Type":
      return at(issue.message ?? `must be ${expected(issue.ast)}`)
    case "Refinement": {
      if (issue.kind === "From") return walk(issue.issue, path)
      // A filter that returned its own message failed with it; otherwise the rule is the filter's.
      const inner = issue.issue
      if (inner._tag === "Type" && inner.message !== undefined) return at(inner.message)
      return at(ruleOf(issue.ast))
    }
    case "Transformation": {
      const inner = issue.issue
      if (issue.kind !== "Transformation") return walk(inner, path)
      // A failed transformation (a number from a string, a date) says why, or the value is not of the target type.
      if (inner._tag === "Type" && inner.message !== undefined) return at(inner.message)
      return inner._tag === "Type" ? at(`must be ${expected(issue.ast.to)}`) : walk(inner, path)
    }
    case "Composite": {
      const issues = Array.isArray(issue.issues) ? issue.issues : [issue.issues as ParseResult.ParseIssue]
      // A union none of whose members fits the value's type: one issue naming what fits.
      if (AST.isUnion(issue.ast) && issues.every((member) => member._tag === "Type")) {
        return at(`must be ${expected(issue.ast)}`)
      }
      // Otherwise the members that got further say what is wrong inside the value.
      const deeper = AST.isUnion(issue.ast) ? issues.filter((member) => member._tag !== "Type") : issues
      return deeper.flatMap((member) => walk(member, path))
    }
  }
}

/** The schema's own `message` annotation on the node that failed, if it has one for this issue. */
const messageAnnotation = (issue: ParseResult.ParseIssue): string | undefined => {
  if (issue._tag === "Pointer" || issue._tag === "Missing" || issue._tag === "Unexpected") return undefined
  const annotation = AST.getMessageAnnotation(issue.ast)
  if (Option.isNone(annotation)) return undefined
  const result = annotation.value(issue)
  const resolve = (message: string | Effect.Effect<string>) =>
    typeof message === "string" ? message : Effect.runSync(message)
  if (typeof result === "string" || Effect.isEffect(result)) {
    // Like Effect's formatters: a plain message on a node whose failure lies deeper gives way to the deeper one.
    const deeper =
      issue._tag === "Composite" ||
      (issue._tag === "Refinement" && issue.kind === "From") ||
      (issue._tag === "Transformation" && issue.kind !== "Transformation")
    return deeper ? undefined : resolve(result)
  }
  return resolve(result.message)
}

/** The rule a refinement checks, from its JSON Schema annotation (set by every built-in filter). */
const ruleOf = (ast: AST.Refinement): string => {
  const rule = AST.getJSONSchemaAnnotation(ast).pipe(Option.getOrElse(() => ({}))) as Record<string, unknown>
  const { minimum, maximum, exclusiveMinimum, exclusiveMaximum, minLength, maxLength, minItems, maxItems } = rule
  if (minimum !== undefined && maximum !== undefined) return `must be between ${minimum} and ${maximum}`
  if (minimum !== undefined) return `must be at least ${minimum}`
  if (maximum !== undefined) return `must be at most ${maximum}`
  if (exclusiveMinimum !== undefined) return `must be greater than ${exclusiveMinimum}`
  if (exclusiveMaximum !== undefined) return `must be less than ${exclusiveMaximum}`
  if (rule.type === "integer") return "must be an integer"
  if (rule.multipleOf !== undefined) return `must be a multiple of ${rule.multipleOf}`
  if (minLength !== undefined && minLength === maxLength) return `must be exactly ${count(minLength, "character")}`
  if (minLength !== undefined && maxLength !== undefined) {
    return `must be between ${minLength} and ${count(maxLength, "character")}`
  }
  if (minLength === 1) return "must not be empty"
  if (minLength !== undefined) return `must be at least ${count(minLength, "character")}`
  if (maxLength !== undefined) return `must be at most ${count(maxLength, "character")}`
  if (minItems !== undefined && minItems === maxItems) return `must have exactly ${count(minItems, "item")}`
  if (minItems !== undefined) return `must have at least ${count(minItems, "item")}`
  if (maxItems !== undefined) return `must have at most ${count(maxItems, "item")}`
  if (typeof rule.pattern === "string") return `must match the pattern ${rule.pattern}`
  return "is not valid"
}

const count = (n: unknown, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`

/** What a value must be to fit `ast`, in words: "a string", "one of email, sms", "an object or null". */
const expected = (ast: AST.AST): string => {
  switch (ast._tag) {
    case "StringKeyword":
    case "TemplateLiteral":
      return "a string"
    case "NumberKeyword":
      return "a number"
    case "BooleanKeyword":
      return "true or false"
    case "BigIntKeyword":
      return "an integer"
    case "TypeLiteral":
      return "an object"
    case "TupleType":
      return "an array"
    case "Literal":
      return ast.literal === null ? "null" : String(ast.literal)
    case "Enums":
      return `one of ${ast.enums.map(([, value]) => value).join(", ")}`
    case "Refinement":
      return expected(ast.from)
    case "Transformation":
      return expected(ast.from)
    case "Suspend":
      return expected(ast.f())
    case "Union": {
      const literals = ast.types.filter(AST.isLiteral).filter((member) => member.literal !== null)
      const others = ast.types.filter((member) => !literals.includes(member as AST.Literal))
      const words = [
        ...(literals.length > 1 ? [`one of ${literals.map((member) => String(member.literal)).join(", ")}`] : []),
        ...(literals.length === 1 ? [expected(literals[0]!)] : []),
        ...others.map(expected)
      ]
      return [...new Set(words)].join(" or ")
    }
    default:
      return AST.getTitleAnnotation(ast).pipe(
        Option.orElse(() => AST.getIdentifierAnnotation(ast)),
        Option.getOrElse(() => String(ast))
      )
  }
}
