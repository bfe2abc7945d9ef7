package ports

import "encoding/json"

// PromptArgument is one argument a prompt declares, as the server listed
// it. Every field is server data.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Required reports that prompts/get must carry the argument.
	Required bool `json:"required,omitempty"`
}

// GetPromptRequest is one prompts/get request.
type GetPromptRequest struct {
	// Name is the prompt's name on the server.
	Name string
	// Arguments are the argument values by name; nil sends none.
	Arguments map[string]string
}

// PromptMessage is one message of a prompt.
type PromptMessage struct {
	// Role is "user" or "assistant" as the server sent it.
	Role string `json:"role"`
	// Content is the message's one content block as raw JSON (an object
	// with a "type": text, image, audio, resource_link, resource).
	Content json.RawMessage `json:"content"`
}

// PromptResult is a prompts/get result.
type PromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
	// Truncated reports that an admission cap cut the messages (set by
	// the catalog, never by a session).
	Truncated bool `json:"truncated,omitempty"`
}

// CompletionRef names what completion/complete completes an argument of.
type CompletionRef struct {
	// Type is CompletionRefPrompt or CompletionRefResource.
	Type string
	// Name is the prompt's name (CompletionRefPrompt) or the resource
	// template's URI template (CompletionRefResource).
	Name string
}

// The completion reference types of MCP.
const (
	CompletionRefPrompt   = "ref/prompt"
	CompletionRefResource = "ref/resource"
)

// CompleteRequest is one completion/complete request.
type CompleteRequest struct {
	Ref CompletionRef
	// Argument is the name of the argument (or template variable) being
	// completed, Value what was typed so far.
	Argument string
	Value    string
	// Context holds the values of arguments already resolved; nil sends
	// none.
	Context map[string]string
}

// Completion is a completion/complete result. Values are server data.
type Completion struct {
	Values []string `json:"values"`
	// Total is the number of values the server says exist, 0 when it did
	// not say.
	Total int `json:"total,omitempty"`
	// HasMore reports that more values exist than were sent.
	HasMore bool `json:"hasMore,omitempty"`
}
