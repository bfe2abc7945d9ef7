package ports

// ContentKind is the "type" of one content block of a tool result.
type ContentKind string

// The content kinds of a tool result, as MCP names them. The protocol's
// list is closed: a block of any other type makes the whole result a
// refusal (the client library refuses it while decoding, and core/catalog
// refuses it by name, "unknown_content_type"), never a block of an
// unknown kind.
const (
	ContentText         ContentKind = "text"
	ContentImage        ContentKind = "image"
	ContentAudio        ContentKind = "audio"
	ContentResourceLink ContentKind = "resource_link"
	// ContentResource is an embedded resource: its contents travel in the
	// result (Text for a text resource, Data for a blob).
	ContentResource ContentKind = "resource"
)

// ContentBlock is one content block of a tool result, typed. Which fields
// are set depends on Kind; the others are zero. Every field is server
// data: a host sanitizes text before it shows it on a terminal and never
// takes a URI, name or MIME type for more than the server's word.
type ContentBlock struct {
	// Kind is the block's type.
	Kind ContentKind
	// Text is the text of a text block, or of an embedded text resource.
	// A text block may have been cut to the tool's admission cap (see
	// ToolResult.Truncated).
	Text string
	// Data holds the bytes of an image or audio block, or of an embedded
	// blob resource, decoded from the base64 the server sent and otherwise
	// exactly as given (never re-encoded, resized or cut). It is non-nil
	// (possibly empty) for those blocks and nil for all others. Its length
	// is bounded by the tool's binary limit, not by the admission cap.
	Data []byte
	// MIMEType is the MIME type the server gave an image, audio, resource
	// link or embedded resource; it is not checked against Data.
	MIMEType string
	// URI is the URI of a resource link or embedded resource.
	URI string
	// Name, Title and Description describe a resource link.
	Name        string
	Title       string
	Description string
	// Size is a resource link's size in bytes as the server stated it,
	// nil when it did not.
	Size *int64
	// Annotations are the block's annotations, nil when it had none.
	Annotations *ContentAnnotations
}

// ContentAnnotations are the optional annotations of a content block:
// hints for the host about who the block is for, never instructions.
type ContentAnnotations struct {
	// Audience lists the intended readers ("user", "assistant"); nil when
	// unspecified.
	Audience []string
	// Priority is the block's importance, 0 (least) to 1 (most), as the
	// server gave it; nil when unspecified.
	Priority *float64
	// LastModified is the ISO 8601 timestamp the server gave, unparsed.
	LastModified string
}

// ToolAnnotations are a tool's annotations as the server declared them.
//
// They are hints from a server that is not trusted: a host must never treat
// ReadOnlyHint (or any other hint) as a grant, for example to skip asking a
// user before a call, nor DestructiveHint false as proof that a call is
// harmless. They describe what the server claims; nothing checks it. A nil
// field means the server did not say, and the protocol's default applies:
// ReadOnlyHint false, DestructiveHint true, IdempotentHint false,
// OpenWorldHint true (DestructiveHint and IdempotentHint mean something only
// when ReadOnlyHint is false).
type ToolAnnotations struct {
	// Title is a human-readable title of the tool, "" when none (the
	// tool's own Title, when set, takes precedence for display).
	Title           string
	ReadOnlyHint    *bool
	DestructiveHint *bool
	IdempotentHint  *bool
	OpenWorldHint   *bool
}
