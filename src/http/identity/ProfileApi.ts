import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { AddressNotFound } from "../../domain/identity/Errors.js"
import { Me, NewAddress, SavedAddress, User, UserPatch } from "../../domain/identity/Users.js"
import { InvalidRequest } from "../../domain/platform/Errors.js"
import { lineError } from "../ErrorLines.js"
import { agentOperation, Bearer } from "./Agent.js"

/** The signed-in user's profile and saved addresses (spec "Profile", scope `profile`). */
export class ProfileApi extends HttpApiGroup.make("profile")
  .add(
    HttpApiEndpoint.get("me", "/me")
      .addSuccess(Me)
      .annotate(OpenApi.Summary, "The signed-in user, their saved addresses and the token's scopes")
      .annotateContext(agentOperation("profile", "read"))
  )
  .add(
    HttpApiEndpoint.patch("updateMe", "/me")
      .setPayload(UserPatch)
      .addSuccess(User)
      .annotate(OpenApi.Summary, "Update the profile: display name, phone, default country, receipt preference")
      .annotateContext(agentOperation("profile", "write"))
  )
  .add(
    HttpApiEndpoint.post("addAddress", "/me/addresses")
      .setPayload(NewAddress)
      .addSuccess(SavedAddress, { status: 201 })
      .annotate(OpenApi.Summary, "Save an address; the first one, or one sent with isDefault, becomes the default")
      .annotateContext(agentOperation("profile", "write"))
  )
  .add(
    HttpApiEndpoint.del("deleteAddress", "/me/addresses/:addressId")
      .setPath(Schema.Struct({ addressId: Schema.String.pipe(Schema.maxLength(64)) }))
      .addSuccess(Schema.Void)
      .addError(lineError("v1", AddressNotFound))
      .annotate(OpenApi.Summary, "Delete a saved address")
      .annotateContext(agentOperation("profile", "write"))
  )
  .addError(lineError("v1", InvalidRequest))
  .prefix("/v1")
  .middleware(Bearer)
  .annotate(OpenApi.Title, "Profile")
  .annotate(OpenApi.Description, "The signed-in user's profile and saved addresses. Scope `profile`.") {}
