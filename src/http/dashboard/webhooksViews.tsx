import type { WebhookAttempt, WebhookDelivery } from "../../domain/checkout/Webhooks.js"
import type { Environment } from "../../domain/company/Company.js"
import {
  type CompanyEventType,
  companyEventTypeDescriptions,
  companyEventTypes,
  maxWebhookEndpoints,
  type WebhookEndpointRecord
} from "../../domain/company/Webhooks.js"
import { requestBody } from "../../services/checkout/WebhookDeliveries.js"
import type { WebhookEndpoint } from "../../services/company/CompanyWebhooks.js"
import {
  Badge,
  ConfirmStep,
  CsrfField,
  copySecretScript,
  EmptyState,
  Field,
  FilterForm,
  FormError,
  type PageLinks,
  Table,
  When
} from "./components.js"
import { dashboardPage } from "./layout.js"
import { environmentNames } from "./pages.js"
import type { CurrentMember } from "./session.js"

/**
 * The pages of the webhooks section (src/http/dashboard/WebhooksPagesLive.ts has their handlers): the endpoints,
 * the form that adds one and the page that shows its secret once, an endpoint with its deliveries, the confirm
 * step of a deletion, and a delivery with its request and attempts.
 */

const section = "/dashboard/webhooks" as const

export const endpointHref = (endpointId: string) => `/dashboard/webhooks/${endpointId}`
export const deliveryHref = (endpointId: string, deliveryId: string) =>
  `/dashboard/webhooks/${endpointId}/deliveries/${deliveryId}`

const EventTypes = ({ types }: { readonly types: ReadonlyArray<string> }) => (
  <>
    {types.map((type, index) => (
      <span key={type}>
        {index === 0 ? null : ", "}
        <code>{type}</code>
      </span>
    ))}
  </>
)

const endpointStatusText = (endpoint: WebhookEndpoint) =>
  endpoint.disabledReason === null
    ? "Active"
    : endpoint.disabledReason === "gone"
      ? "Disabled: its receiver answered 410 Gone"
      : "Disabled"

const EndpointStatus = ({ endpoint }: { readonly endpoint: WebhookEndpoint }) => (
  <Badge tone={endpoint.status === "active" ? "neutral" : "warning"}>{endpointStatusText(endpoint)}</Badge>
)

const deliveryStatusNames: Readonly<Record<WebhookDelivery["status"], string>> = {
  pending: "Pending",
  delivered: "Delivered",
  failed: "Failed",
  disabled: "Not sent (disabled)"
}

const DeliveryStatus = ({ delivery }: { readonly delivery: WebhookDelivery }) => (
  <Badge tone={delivery.status === "failed" || delivery.status === "disabled" ? "warning" : "neutral"}>
    {deliveryStatusNames[delivery.status]}
  </Badge>
)

const latencyText = (milliseconds: number | undefined | null) =>
  milliseconds === undefined || milliseconds === null ? "—" : `${milliseconds} ms`

export interface EndpointsState {
  readonly environment: Environment
  readonly endpoints: ReadonlyArray<WebhookEndpoint>
  readonly links: PageLinks
}

export const endpointsPage = (current: CurrentMember, state: EndpointsState) =>
  dashboardPage(
    "Webhooks",
    current,
    <>
      <h1>Webhooks</h1>
      <p>
        Endpoints receive the company's order and gift events as signed HTTPS requests, each in one environment, for
        every account of the company there. At most {maxWebhookEndpoints} per environment.
      </p>
      <p>
        <a href={`/dashboard/webhooks/new?environment=${state.environment}`}>Add an endpoint</a>
      </p>
      <FilterForm
        path="/dashboard/webhooks"
        fields={[
          {
            name: "environment",
            label: "Environment",
            value: state.environment,
            options: [
              ["test", environmentNames.test],
              ["live", environmentNames.live]
            ]
          }
        ]}
      />
      <Table
        caption={`${environmentNames[state.environment]} endpoints`}
        columns={[
          {
            header: "URL",
            cell: (endpoint: WebhookEndpoint) => <a href={endpointHref(endpoint.id)}>{endpoint.url}</a>
          },
          { header: "Events", cell: (endpoint: WebhookEndpoint) => <EventTypes types={endpoint.eventTypes} /> },
          { header: "Status", cell: (endpoint: WebhookEndpoint) => <EndpointStatus endpoint={endpoint} /> },
          { header: "Created", cell: (endpoint: WebhookEndpoint) => <When at={endpoint.createdAt} /> }
        ]}
        rows={state.endpoints}
        rowKey={(endpoint) => endpoint.id}
        links={state.links}
        empty={
          <EmptyState title={`No ${state.environment} endpoints yet.`}>
            <p>Add one to hear about orders and gifts as they change.</p>
          </EmptyState>
        }
      />
    </>,
    { section }
  )

export interface NewEndpointState {
  readonly environment: Environment
  readonly url?: string
  readonly eventTypes?: ReadonlyArray<string>
  /** Problems by field: `url`, `eventTypes`. */
  readonly errors?: Readonly<Record<string, string>>
  /** A problem with the whole form (the limit of endpoints). */
  readonly error?: string
}

export const newEndpointPage = (current: CurrentMember, state: NewEndpointState, status = 200) => {
  const typesError = state.errors?.eventTypes
  return dashboardPage(
    "Add a webhook endpoint",
    current,
    <>
      <h1>Add a webhook endpoint</h1>
      {state.errors === undefined && state.error === undefined ? null : (
        <FormError>{state.error ?? "Please correct the fields marked below."}</FormError>
      )}
      <form method="post" action="/dashboard/webhooks" noValidate>
        <CsrfField token={current.csrf} />
        <Field
          name="url"
          label="URL"
          type="url"
          value={state.url}
          maxLength={2048}
          hint="https only, on a host with public addresses; redirects are not followed."
          error={state.errors?.url}
        />
        <div class="field">
          <label htmlFor="environment">Environment</label>
          <p class="hint" id="environment-hint">
            It receives the events of every account of the company in this environment.
          </p>
          <select id="environment" name="environment" aria-describedby="environment-hint">
            {(["test", "live"] as const).map((environment) => (
              <option value={environment} selected={environment === state.environment} key={environment}>
                {environmentNames[environment]}
              </option>
            ))}
          </select>
        </div>
        <fieldset
          class={typesError === undefined ? "choices" : "choices invalid"}
          aria-describedby={typesError === undefined ? undefined : "eventTypes-error"}
        >
          <legend>Event types</legend>
          {companyEventTypes.map((type: CompanyEventType) => (
            <div class="choice" key={type}>
              <input
                type="checkbox"
                id={`event-${type}`}
                name="eventTypes"
                value={type}
                checked={state.eventTypes?.includes(type) === true}
                aria-describedby={`event-${type}-hint`}
              />
              <label htmlFor={`event-${type}`}>
                <code>{type}</code>
              </label>
              <p class="hint" id={`event-${type}-hint`}>
                {companyEventTypeDescriptions[type]}
              </p>
            </div>
          ))}
          {typesError === undefined ? null : (
            <p class="field-error" id="eventTypes-error">
              {typesError}
            </p>
          )}
        </fieldset>
        <button type="submit">Create endpoint</button>
      </form>
      <p>
        <a href={`/dashboard/webhooks?environment=${state.environment}`}>Back to webhooks</a>
      </p>
    </>,
    { section, status }
  )
}

/** After creation: the secret, shown this once. */
export const createdEndpointPage = (current: CurrentMember, endpoint: WebhookEndpointRecord, secret: string) =>
  dashboardPage(
    "Endpoint created",
    current,
    <>
      <h1>Endpoint created</h1>
      <p>
        <strong>Copy the signing secret now: it is shown only this once.</strong> Your receiver verifies the{" "}
        <code>webhook-signature</code> header of every delivery with it. If it is lost, delete the endpoint and add a
        new one.
      </p>
      <div class="field">
        <label htmlFor="secret">Signing secret</label>
        <input id="secret" type="text" readOnly value={secret} spellcheck={false} autocomplete="off" />
      </div>
      <div class="actions">
        <button type="button" class="secondary" data-copy="secret" data-status="copy-status" hidden>
          Copy secret
        </button>
        <p class="hint" id="copy-status" role="status" />
      </div>
      <dl class="facts">
        <dt>URL</dt>
        <dd>{endpoint.url}</dd>
        <dt>Environment</dt>
        <dd>{environmentNames[endpoint.environment]}</dd>
        <dt>Events</dt>
        <dd>
          <EventTypes types={endpoint.eventTypes} />
        </dd>
      </dl>
      <p>
        <a href={endpointHref(endpoint.id)}>Go to the endpoint</a>
      </p>
    </>,
    { section, script: copySecretScript }
  )

export interface EndpointState {
  readonly endpoint: WebhookEndpoint
  readonly deliveries: ReadonlyArray<WebhookDelivery>
  /** By delivery id: the latency of its latest attempt with an outcome. */
  readonly latencies: ReadonlyMap<string, number>
  readonly links: PageLinks
}

const EndpointFacts = ({ endpoint }: { readonly endpoint: WebhookEndpoint }) => (
  <dl class="facts">
    <dt>URL</dt>
    <dd>{endpoint.url}</dd>
    <dt>Status</dt>
    <dd>
      <EndpointStatus endpoint={endpoint} />
    </dd>
    <dt>Environment</dt>
    <dd>{environmentNames[endpoint.environment]}</dd>
    <dt>Events</dt>
    <dd>
      <EventTypes types={endpoint.eventTypes} />
    </dd>
    <dt>Created</dt>
    <dd>
      <When at={endpoint.createdAt} />
    </dd>
    <dt>Id</dt>
    <dd>
      <code>{endpoint.id}</code>
    </dd>
  </dl>
)

/** A form of one button posting to `action`. */
const ActionForm = (props: {
  readonly action: string
  readonly csrf: string
  readonly label: string
  readonly fields?: Readonly<Record<string, string>>
  readonly secondary?: boolean
}) => (
  <form method="post" action={props.action}>
    <CsrfField token={props.csrf} />
    {Object.entries(props.fields ?? {}).map(([name, value]) => (
      <input type="hidden" name={name} value={value} key={name} />
    ))}
    <button type="submit" class={props.secondary === true ? "secondary" : undefined}>
      {props.label}
    </button>
  </form>
)

export const endpointPage = (current: CurrentMember, state: EndpointState) => {
  const { endpoint } = state
  const href = endpointHref(endpoint.id)
  const active = endpoint.status === "active"
  return dashboardPage(
    "Webhook endpoint",
    current,
    <>
      <p>
        <a href={`/dashboard/webhooks?environment=${endpoint.environment}`}>Webhooks</a>
      </p>
      <h1>Webhook endpoint</h1>
      <EndpointFacts endpoint={endpoint} />
      <div class="actions">
        {active ? <ActionForm action={`${href}/test`} csrf={current.csrf} label="Send test event" /> : null}
        <ActionForm
          action={`${href}/status`}
          csrf={current.csrf}
          label={active ? "Disable" : "Enable"}
          fields={{ status: active ? "disabled" : "active" }}
          secondary={true}
        />
        <a href={`${href}/delete`}>Delete endpoint</a>
      </div>
      {active ? null : (
        <p>
          While disabled, events are recorded but not sent. Enable it to send later events, a test event, or a resend.
        </p>
      )}
      <h2>Deliveries</h2>
      <Table
        caption="Deliveries, newest first"
        columns={[
          {
            header: "Event",
            cell: (delivery: WebhookDelivery) => (
              <a href={deliveryHref(endpoint.id, delivery.eventId)}>{delivery.eventType}</a>
            )
          },
          { header: "Status", cell: (delivery: WebhookDelivery) => <DeliveryStatus delivery={delivery} /> },
          { header: "Attempts", cell: (delivery: WebhookDelivery) => String(delivery.attempts) },
          {
            header: "Response",
            cell: (delivery: WebhookDelivery) =>
              delivery.lastStatusCode === null ? "—" : String(delivery.lastStatusCode)
          },
          { header: "Latency", cell: (delivery: WebhookDelivery) => latencyText(state.latencies.get(delivery.id)) },
          { header: "Next retry", cell: (delivery: WebhookDelivery) => <When at={delivery.nextAttemptAt} /> },
          { header: "Created", cell: (delivery: WebhookDelivery) => <When at={delivery.createdAt} /> }
        ]}
        rows={state.deliveries}
        rowKey={(delivery) => delivery.id}
        links={state.links}
        empty={
          <EmptyState title="No deliveries yet.">
            <p>Events of the types it subscribes to, and test events, appear here.</p>
          </EmptyState>
        }
      />
    </>,
    { section }
  )
}

export const confirmDeletePage = (current: CurrentMember, endpoint: WebhookEndpoint) =>
  dashboardPage(
    "Delete webhook endpoint",
    current,
    <>
      <h1>Delete webhook endpoint</h1>
      <EndpointFacts endpoint={endpoint} />
      <ConfirmStep
        title="Delete this endpoint?"
        action={`${endpointHref(endpoint.id)}/delete`}
        csrf={current.csrf}
        confirmLabel="Delete endpoint"
        cancelHref={endpointHref(endpoint.id)}
      >
        <p>
          Nothing more is sent to {endpoint.url}, its pending deliveries included, and its deliveries can no longer be
          resent. This cannot be undone.
        </p>
      </ConfirmStep>
    </>,
    { section }
  )

/** The body as sent, indented for reading (the exact bytes are what the signature covers). */
const prettyBody = (delivery: WebhookDelivery) => {
  const body = requestBody(delivery)
  try {
    return JSON.stringify(JSON.parse(body), null, 2)
  } catch {
    return body
  }
}

const Headers = ({ headers }: { readonly headers: Readonly<Record<string, string>> }) => (
  <dl class="facts">
    {Object.entries(headers).map(([name, value]) => [
      <dt key={`${name}-name`}>
        <code>{name}</code>
      </dt>,
      <dd key={`${name}-value`}>
        <code>{value}</code>
      </dd>
    ])}
  </dl>
)

export interface DeliveryState {
  readonly endpoint: WebhookEndpoint
  readonly delivery: WebhookDelivery
  /** Oldest first. */
  readonly attempts: ReadonlyArray<WebhookAttempt>
}

export const deliveryPage = (current: CurrentMember, state: DeliveryState) => {
  const { endpoint, delivery, attempts } = state
  const sent = [...attempts].reverse().find((attempt) => attempt.requestHeaders !== null)
  return dashboardPage(
    `Delivery of ${delivery.eventType}`,
    current,
    <>
      <p>
        <a href={endpointHref(endpoint.id)}>Back to the endpoint</a>
      </p>
      <h1>
        Delivery of <code>{delivery.eventType}</code>
      </h1>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <DeliveryStatus delivery={delivery} />
        </dd>
        <dt>Attempts</dt>
        <dd>{delivery.attempts}</dd>
        <dt>Resent</dt>
        <dd>{delivery.resends === 0 ? "Never" : delivery.resends === 1 ? "Once" : `${delivery.resends} times`}</dd>
        <dt>Next retry</dt>
        <dd>
          <When at={delivery.nextAttemptAt} />
        </dd>
        <dt>Created</dt>
        <dd>
          <When at={delivery.createdAt} />
        </dd>
        <dt>Delivered</dt>
        <dd>
          <When at={delivery.deliveredAt} />
        </dd>
        {delivery.lastError === null ? null : (
          <>
            <dt>Last error</dt>
            <dd>{delivery.lastError}</dd>
          </>
        )}
        <dt>Webhook id</dt>
        <dd>
          <code>{delivery.eventId}</code>
        </dd>
      </dl>
      {endpoint.status === "active" ? (
        <div class="actions">
          <ActionForm
            action={`${deliveryHref(endpoint.id, delivery.eventId)}/resend`}
            csrf={current.csrf}
            label="Resend"
          />
          <p class="hint">Sends it again with the same webhook id, whatever its outcome was.</p>
        </div>
      ) : (
        <p>The endpoint is disabled: enable it to resend this delivery.</p>
      )}
      <h2>Request</h2>
      <dl class="facts">
        <dt>Method</dt>
        <dd>POST</dd>
        <dt>URL</dt>
        <dd>{delivery.url}</dd>
      </dl>
      <h3>Headers</h3>
      {sent === undefined || sent.requestHeaders === null ? (
        <p>Its headers are recorded when it is first sent.</p>
      ) : (
        <>
          <p class="hint">As sent in attempt {sent.attempt}; each attempt has its own timestamp and signature.</p>
          <Headers headers={sent.requestHeaders} />
        </>
      )}
      <h3>Body</h3>
      <pre class="payload">{prettyBody(delivery)}</pre>
      <h2>Attempts</h2>
      {attempts.length === 0 ? (
        <p>Not attempted yet.</p>
      ) : (
        attempts.map((attempt) => (
          <section key={attempt.attempt} aria-labelledby={`attempt-${attempt.attempt}`}>
            <h3 id={`attempt-${attempt.attempt}`}>Attempt {attempt.attempt}</h3>
            <dl class="facts">
              <dt>Started</dt>
              <dd>
                <When at={attempt.startedAt} />
              </dd>
              <dt>Response status</dt>
              <dd>
                {attempt.statusCode === null
                  ? attempt.error === null
                    ? "In flight"
                    : "No response"
                  : attempt.statusCode}
              </dd>
              <dt>Latency</dt>
              <dd>{attempt.statusCode === null && attempt.error === null ? "—" : latencyText(attempt.durationMs)}</dd>
              {attempt.error === null ? null : (
                <>
                  <dt>Error</dt>
                  <dd>{attempt.error}</dd>
                </>
              )}
            </dl>
            {attempt.responseBody === null || attempt.responseBody === "" ? null : (
              <>
                <p class="hint">Response body{attempt.responseTruncated === true ? ", its first 1 KB" : ""}:</p>
                <pre class="payload">{attempt.responseBody}</pre>
              </>
            )}
          </section>
        ))
      )}
    </>,
    { section }
  )
}
