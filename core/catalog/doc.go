// Package catalog turns what a session discovered into one canonical,
// host-facing catalog per server: tools (as ports.Tool values the host puts
// into its generic tool slot), prompts, resources and resource templates,
// a rejected bucket with a reason for every entry that did not make it, and
// diagnostics. A Set joins the catalogs of every server.
//
// # Discovery
//
// Discover drains the lists whose capability the server declared, and no
// other, page by page: at most DiscoverOptions.MaxPages pages per list
// (DefaultMaxPages, 1,000), each page under its own timeout
// (DefaultPageTimeout, 30s), stopping at a cursor it has already
// requested, and keeping per list at most MaxItems items
// (DefaultMaxItems, 50,000) and MaxBytes bytes (DefaultMaxBytes, 32 MiB)
// of what the server sent: a raw prompt or resource counts its JSON
// length, a tool an estimate of its compact JSON made from the decoded
// value, and each next cursor its length. Whatever a server lists, one
// server's catalog keeps at most four lists of that size; the defaults
// hold a server of 10,000 ordinary tools several times over.
//
// A list that stopped early keeps the items up to where it stopped and is
// marked partial with its reason (PartialPageLimit, PartialRepeatedCursor,
// PartialPageTimeout, PartialListFailed, PartialItemsExceeded
// "discovery_items_exceeded", PartialBytesExceeded
// "discovery_bytes_exceeded"); Catalog.Complete is false then. A partial
// catalog is never reported as complete.
//
// # Host-facing tool names
//
// A tool's host-facing name is ToolName(server, tool):
//
//	mcp__<server>__<tool>
//
// when both parts are plain ASCII letters, digits, '_' and '-', the server
// part contains no "__" and does not end with '_' (so the first "__" after
// the prefix splits the name back into its pair), and the name fits in 64
// characters. Any other pair, whatever its length and bytes (empty,
// invalid UTF-8, NUL, thousands of characters), gets a sanitized name:
// characters outside the set become '_', both parts are shortened to fit,
// and a suffix of '_' plus 12 hex digits of SHA-256 over the exact
// (server, tool) pair keeps distinct pairs apart:
//
//	mcp__<server'>__<tool'>_<hash>
//
// Every name matches ^[a-zA-Z0-9_-]{1,64}$, the rule of model APIs, and is
// a pure function of the pair, so it is stable across reconnects and
// processes. Two tools that still end up with one name are both rejected
// ("name_collision"), within a catalog by Build and across servers by
// NewSet; the host never sees an ambiguous name.
//
// # Schema narrowing
//
// A tool's inputSchema is written by a third party and may use JSON Schema
// constructs mcpward does not enforce. Rather than refuse such a tool,
// Build narrows its schema (see Narrow): a subschema the subset cannot
// express is replaced by a node that accepts anything, never deleted,
// required is carried through untouched, everything expressible (nested
// objects, array items included) is enforced, and the replaced paths are
// reported once per tool as a Diagnostic "schema_narrowed". The host and
// the model see the narrowed schema; Tool.Call validates arguments against
// it before anything leaves the process and names the failing path in an
// *ArgumentError.
//
// Narrowing is one walk over a schema's compact form (compact JSON with
// sorted keys, names, strings and numbers written as encoding/json writes
// their decoded values) that writes the narrowed schema in the same form;
// only those bytes are kept per tool, and the validator is compiled from
// them on the tool's first call. A decoded schema is first written into
// that form. A schema handed over as a json.RawMessage (see
// ports.ToolItem) is not decoded: its bytes are rewritten once into it
// (duplicate names collapsed), so the same walk narrows both, with the
// same result.
//
// # Schemas as Go values
//
// A host may hand over a schema as a Go value (Narrow, or a ports.ToolItem
// with a decoded schema, to Build) instead of JSON. The rule: the work on
// a Go value is bounded by the length of the JSON text it stands for, and
// that JSON is what counts. A value decoded from JSON is written back at
// about its own length; one that shares a sub-schema under several names
// (a DAG) gives exactly what its JSON text gives, each name expanded. A
// value whose JSON is longer than MaxSchemaBytes (64 MiB) is refused as
// soon as writing passes that bound, never expanded: Narrow narrows it as
// it narrows a root that is no JSON object ({"type":"object"}, "/"
// reported), Build rejects the tool ("invalid_input_schema") or drops its
// outputSchema ("output_schema_invalid"). A cycle stands for endless JSON:
// where every path round it is cut by the depth limits first (a value
// naming itself), it gives what nesting past them gives (such a keyword
// value is not encodable); otherwise (a schema naming itself under
// properties twice) it is refused by the bound like any JSON that long.
// Either way the call ends after at most a small multiple of
// MaxSchemaBytes steps (about a second of CPU), never 2^depth of them.
// Discover's own estimate (see Discovery) already stops at its byte bound.
//
// # Result size
//
// A tool result may put at most the tool's admission cap of characters
// into model context (DefaultAdmissionCap, or Options.AdmissionCap); the
// rest is cut off and ToolResult.Truncated set. The one vendor key
// "anthropic/maxResultSizeChars" of a tool's _meta replaces the cap when it
// is an integer within [MinResultSizeChars, MaxResultSizeChars]; any other
// value is ignored with a Diagnostic "result_size_meta_ignored", never
// taken as permission to widen. This character cap limits model context; a
// transport's byte receive cap, applied before parsing, is a separate
// limit on what is materialized locally.
//
// # Prompts, resources and templates
//
// Prompts, resources and resource templates are typed entries (Prompt,
// Resource, ResourceTemplate) under host-facing names made like tools'
// (ToolName of the server and the prompt's name, the resource's URI or the
// template's URI template), each kind a namespace of its own, with the
// same rejected bucket: an entry that does not decode is "invalid_entry",
// a prompt declaring more than MaxPromptArguments arguments
// "too_many_arguments", a template that is not RFC 6570 "invalid_template",
// a repeated name "duplicate_name", equal host-facing names
// "name_collision". Prompt.Get checks the arguments against the declared
// ones before anything is sent ("unknown_argument", "missing_argument")
// and cuts the messages to the admission cap; a read (Resource.Read,
// ResourceTemplate.Read, Catalog.ReadResource) is cut to Options.ReadCap
// bytes (DefaultReadCap, 1 MiB), Truncated set. Template expansion
// (URITemplate, levels 1 to 4 for string values) refuses an expansion
// whose scheme or authority is not the one the template's literal text
// names ("template_origin_mismatch"). Completion values are bounded
// (MaxCompletionValues of at most MaxCompletionValueLen bytes). The
// requests go through the Caller given to Build when it is also a
// ContentCaller (the supervisor is).
//
// # Typed results
//
// Tool.Call hands over a result's content blocks typed (ports.ContentBlock:
// text, image, audio, resource link, embedded resource) beside their JSON.
// A block of a type the protocol does not define refuses the result by
// name ("unknown_content_type"); so does an image, audio or blob block
// larger than the binary limit (DefaultMaxBinaryBytes, 5 MiB decoded, or
// Options.MaxBinaryBytes), which is separate from the character cap:
// binary data is kept whole, never cut. A tool's outputSchema is narrowed
// like its inputSchema and structuredContent validated against it; a
// mismatch is a refusal ("structured_content_invalid"), never a result
// handed over as valid. Of a result's _meta only the keys the host lists
// pass.
//
// A tool's title and annotations reach the host in its Spec. Annotations
// are the server's hints, not facts: a host must not treat readOnlyHint
// as a grant to call without asking.
//
// # Errors
//
// Every failure is a *refusal.Error (invalid arguments come as an
// *ArgumentError wrapping one). Of what a server sent, only names go into
// an error's Detail, escaped under core/textsafe's rule and cut: the JSON
// pointer of an argument that broke the schema ("/message: required: …"),
// the argument a prompt requires, the arguments a prompt or variables a
// template declares. Descriptions and schema text never do, and neither
// does an argument's value or a name the caller chose.
package catalog
