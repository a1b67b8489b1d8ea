import { scopeDescriptions, supportedScopes } from "../../domain/identity/OAuth.js"
import { agentOperations } from "../Operations.js"
import type { Manifest } from "./WellKnownApi.js"

/**
 * The connector manifest (`/.well-known/ribbon-agents.json`): everything an agent platform needs to offer
 * Ribbon as a connector. Operations come from the HttpApi definition (src/http/Operations.ts).
 */

export const examplePrompts: ReadonlyArray<string> = [
  "Find a birthday gift under $50 for my sister in Japan who loves tea.",
  "What would this candle cost, all in, delivered to Germany?",
  "Show me gift collections under 40 euros that ship to France.",
  "Save my office in London as a delivery address.",
  "Change my default country to Canada."
]

export const makeManifest = (baseUrl: string): Manifest => ({
  schemaVersion: "1.0",
  name: "ribbon",
  description:
    "Ribbon is a gifting marketplace: search gifts, get the exact all-in price for a country, and check out " +
    "through a hosted payment link the user pays. Sensitive writes always need the user's confirmation.",
  apiBaseUrl: `${baseUrl}/v1`,
  openApiUrl: `${baseUrl}/openapi.json`,
  oauth: {
    authorizationServerMetadata: `${baseUrl}/.well-known/oauth-authorization-server`,
    protectedResourceMetadata: `${baseUrl}/.well-known/oauth-protected-resource`,
    jwksUri: `${baseUrl}/.well-known/jwks.json`
  },
  scopes: supportedScopes.map((name) => ({ name, description: scopeDescriptions[name] })),
  toolClasses: {
    read: "Reads only; safe to call without asking.",
    write: "Changes the user's data; tell the user what changed.",
    "sensitive-write": "Spends money or cancels; always confirm with the user before calling."
  },
  mcp: { url: `${baseUrl}/mcp`, transport: "streamable-http" },
  operations: agentOperations.map((operation) => ({
    name: operation.name,
    method: operation.method,
    path: operation.path,
    toolClass: operation.toolClass,
    scope: operation.scope,
    description: operation.description,
    inputSchema: operation.inputSchema
  })),
  examplePrompts
})
