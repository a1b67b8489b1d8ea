import * as CatalogErrors from "./catalog/Errors.js"
import * as CheckoutErrors from "./checkout/Errors.js"
import * as CompanyErrors from "./company/Errors.js"
import * as IdentityErrors from "./identity/Errors.js"
import type { ErrorCode } from "./platform/Errors.js"
import * as PlatformErrors from "./platform/Errors.js"

/** A domain error class, with its codes on every line. */
export interface DomainErrorClass {
  readonly _tag: string
  readonly code: ErrorCode
}

const isDomainErrorClass = (value: unknown): value is DomainErrorClass => typeof value === "function" && "code" in value

/**
 * Every domain error class, read off each context's errors module, for docs/errors.md and the catalogue
 * test: an error defined in a context is in the catalogue without being listed again.
 */
export const catalogue: ReadonlyArray<DomainErrorClass> = [
  PlatformErrors,
  CatalogErrors,
  IdentityErrors,
  CompanyErrors,
  CheckoutErrors
].flatMap((module) => Object.values(module).filter(isDomainErrorClass))
