import { HttpClient, HttpClientRequest } from "@effect/platform"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { Companies } from "../../src/services/company/Companies.js"
import { BaseUrl } from "./auth.js"
import { CompanyServicesLive, createCompany, getWith, keyHeaders, postWith } from "./company.js"

/**
 * What the gift page's tests start from: a new company (its rate limits raised for a test's bursts) with a product
 * campaign of 1 to `budgetMax` USD ("Welcome to the team!"), and a gift of it for Grace Hopper, a recipient living in
 * `recipientCountry` first when given. The gift's link and id, the campaign as created, and the company's API to
 * read and post with. Needs an `HttpClient` (FetchHttpClient.layer) and the server's `BaseUrl`.
 */
export const productGiftFor = (
  productId: string,
  options: { readonly key?: string; readonly budgetMax?: number; readonly recipientCountry?: string } = {}
) =>
  Effect.gen(function* () {
    const baseUrl = yield* BaseUrl
    const http = (yield* HttpClient.HttpClient).pipe(HttpClient.mapRequest(HttpClientRequest.prependUrl(baseUrl)))
    const company = yield* createCompany()
    yield* Effect.flatMap(Companies, (c) =>
      c.setRateLimits(company.companyId, { global: { rate: 1000, burst: 1000 } })
    ).pipe(Effect.provide(CompanyServicesLive), Effect.orDie)
    const headers = keyHeaders(company.apiKey)
    const read = (path: string) => getWith(path, headers).pipe(Effect.provideService(HttpClient.HttpClient, http))
    const post = (path: string, body: unknown) =>
      postWith(path, body, headers).pipe(Effect.provideService(HttpClient.HttpClient, http))

    const campaign = yield* post("/public-api/v2/campaigns", {
      name: "Welcome",
      customization: {
        giftProperties: {
          selectedGiftType: "product",
          productId,
          budget: { min: 1, max: options.budgetMax ?? 20000 }
        },
        message: "Welcome to the team!"
      }
    })
    expect(campaign.status, JSON.stringify(campaign.body)).toBe(201)
    if (options.recipientCountry !== undefined) {
      const recipient = yield* post("/public-api/v2/recipients", {
        firstName: "Grace",
        lastName: "Hopper",
        email: "grace@example.com",
        country: options.recipientCountry
      })
      expect(recipient.status, JSON.stringify(recipient.body)).toBe(201)
    }
    const sent = yield* post("/public-api/v2/gifts", {
      campaignId: campaign.body.id,
      recipients: [{ firstname: "Grace", lastname: "Hopper", email: "grace@example.com", key: options.key ?? "grace" }]
    })
    expect(sent.status, JSON.stringify(sent.body)).toBe(200)
    return {
      link: sent.body.results[0].link as string,
      giftId: sent.body.results[0].id as string,
      campaign: campaign.body,
      read,
      post
    }
  })
