import { HttpClient, HttpClientRequest } from "@effect/platform"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { BaseUrl } from "./auth.js"
import { CompanyServicesLive, createCompany, getWith, keyHeaders, postWith, raiseLimits } from "./company.js"

/**
 * A new company (its rate limits raised for a test's bursts) with a v2 product campaign of `productId`, named
 * "Welcome" and budgeted 1 to 20,000 USD unless `options` say otherwise (`giftProperties` are merged over those): the
 * company, its API key's headers and the campaign as created. Needs the company services and an `HttpClient` that
 * reaches the server.
 */
export const companyWithProductCampaign = (
  productId: string,
  options: {
    readonly name?: string
    readonly message?: string
    readonly giftProperties?: Readonly<Record<string, unknown>>
  } = {}
) =>
  Effect.gen(function* () {
    const company = yield* createCompany()
    yield* raiseLimits(company.companyId)
    const headers = keyHeaders(company.apiKey)
    const campaign = yield* postWith(
      "/public-api/v2/campaigns",
      {
        name: options.name ?? "Welcome",
        customization: {
          giftProperties: {
            selectedGiftType: "product",
            productId,
            budget: { min: 1, max: 20000 },
            ...options.giftProperties
          },
          ...(options.message === undefined ? {} : { message: options.message })
        }
      },
      headers
    )
    expect(campaign.status, JSON.stringify(campaign.body)).toBe(201)
    return { ...company, headers, campaign: campaign.body }
  })

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
    const { headers, campaign } = yield* companyWithProductCampaign(productId, {
      message: "Welcome to the team!",
      giftProperties: { budget: { min: 1, max: options.budgetMax ?? 20000 } }
    }).pipe(Effect.provideService(HttpClient.HttpClient, http), Effect.provide(CompanyServicesLive), Effect.orDie)
    const read = (path: string) => getWith(path, headers).pipe(Effect.provideService(HttpClient.HttpClient, http))
    const post = (path: string, body: unknown) =>
      postWith(path, body, headers).pipe(Effect.provideService(HttpClient.HttpClient, http))

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
      campaignId: campaign.id,
      recipients: [{ firstname: "Grace", lastname: "Hopper", email: "grace@example.com", key: options.key ?? "grace" }]
    })
    expect(sent.status, JSON.stringify(sent.body)).toBe(200)
    return {
      link: sent.body.results[0].link as string,
      giftId: sent.body.results[0].id as string,
      campaign,
      read,
      post
    }
  })
