package ports

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"slices"
	"time"
	"unicode/utf8"
)

// ElicitMode is how a server asks the user for something mid-call.
type ElicitMode string

// The elicitation modes of MCP 2025-11-25.
const (
	// ElicitForm asks for a flat form of primitive fields (ElicitSchema).
	ElicitForm ElicitMode = "form"
	// ElicitURL asks the user to visit a URL (always https) outside the
	// client; the host shows it and never follows it itself.
	ElicitURL ElicitMode = "url"
)

// ElicitAction is the user's answer to an elicitation.
type ElicitAction string

// The answers MCP defines.
const (
	// ElicitAccept: the user submitted the form (ElicitResult.Content
	// holds the values) or agreed to visit the URL.
	ElicitAccept ElicitAction = "accept"
	// ElicitDecline: the user explicitly said no.
	ElicitDecline ElicitAction = "decline"
	// ElicitCancel: the user dismissed the question without choosing.
	ElicitCancel ElicitAction = "cancel"
)

// ElicitFieldType is the type of one form field. Only the primitive types
// MCP allows in an elicitation form exist: no nested object, no array but
// a multi-select of string options.
type ElicitFieldType string

// The field types.
const (
	FieldString  ElicitFieldType = "string"
	FieldNumber  ElicitFieldType = "number"
	FieldInteger ElicitFieldType = "integer"
	FieldBoolean ElicitFieldType = "boolean"
	// FieldMultiSelect is an array of distinct strings, each one of
	// Options (JSON Schema type "array" with enumerated items).
	FieldMultiSelect ElicitFieldType = "array"
)

// The string formats a form field may ask for.
const (
	FormatEmail    = "email"
	FormatURI      = "uri"
	FormatDate     = "date"
	FormatDateTime = "date-time"
)

// Bounds of an elicitation request. A session refuses a request beyond
// them by name, answering the server with an error.
const (
	// MaxElicitSchemaBytes bounds the JSON size of a requested schema.
	MaxElicitSchemaBytes = 64 << 10
	// MaxElicitFields bounds the number of fields of a form.
	MaxElicitFields = 64
	// MaxElicitOptions bounds the options of one field.
	MaxElicitOptions = 256
	// MaxElicitMessage bounds ElicitRequest.Message in bytes: a session
	// cuts a longer message at a UTF-8 boundary at or below it.
	MaxElicitMessage = 4096
	// MaxElicitText bounds a field's name, title and description and an
	// option's value and title in bytes; a session cuts longer titles and
	// descriptions and refuses a longer name or value.
	MaxElicitText = 1024
	// MaxElicitURL bounds the length of a URL-mode URL in bytes.
	MaxElicitURL = 4096
)

// ElicitOption is one choice of a string field or multi-select.
type ElicitOption struct {
	// Value is what the answer carries.
	Value string
	// Title is what a person is shown ("" means show Value).
	Title string
}

// ElicitField is one field of a form. Every text is server text: a host
// sanitizes it before showing it on a terminal.
type ElicitField struct {
	// Name is the property name the answer uses as its key.
	Name string
	Type ElicitFieldType
	// Title and Description are the server's labels ("" when none).
	Title       string
	Description string
	// Required: an accepted answer must carry this field.
	Required bool
	// Format is one of the Format constants, or "" (FieldString only).
	Format string
	// Options, when non-empty, are the only values allowed (FieldString:
	// one of them; FieldMultiSelect: any distinct subset, which is
	// required for that type).
	Options []ElicitOption
	// MinLength and MaxLength bound a FieldString value in characters.
	MinLength, MaxLength *int
	// Minimum and Maximum bound a FieldNumber or FieldInteger value.
	Minimum, Maximum *float64
	// MinItems and MaxItems bound a FieldMultiSelect answer.
	MinItems, MaxItems *int
	// Default is the server's default (string, float64, bool or []string
	// by Type), already checked against the field; nil means none.
	Default any
}

// ElicitSchema is a validated elicitation form: flat, primitive fields in
// name order.
type ElicitSchema struct {
	Fields []ElicitField
}

// ElicitRequest is one elicitation a server sent, validated by the
// session (a request outside what MCP allows never reaches the host).
type ElicitRequest struct {
	// ServerID is the server asking (its configured name).
	ServerID string
	Mode     ElicitMode
	// Message is the server's question, at most MaxElicitMessage bytes
	// (server text: sanitize before display).
	Message string
	// Schema is the form of an ElicitForm request.
	Schema ElicitSchema
	// URL is the https URL of an ElicitURL request: show it, never open
	// or fetch it on the server's behalf.
	URL string
	// ElicitationID is the server's id of an ElicitURL request.
	ElicitationID string
}

// ElicitResult is the host's answer.
type ElicitResult struct {
	Action ElicitAction
	// Content holds the form's values with ElicitAccept in ElicitForm
	// mode (string, float64 or any integer type, bool, []string); it is
	// ignored otherwise. Fields it omits that have a default are answered
	// with the default (Schema.WithDefaults); the result is then checked
	// with Schema.Validate before it is sent.
	Content map[string]any
}

// Elicitor is the host's elicitation port: it asks the user (or a policy)
// and answers. A session declares the elicitation capability only to a
// server the host gave an Elicitor for. Elicit may be called concurrently
// for different sessions (a session asks one question at a time); it
// should return when ctx ends (the server cancelled, the session closed or
// the session's bound passed), and its answer is then dropped. An error
// is answered to the server as a refusal: a *refusal.Error's Reason is
// sent, any other error is sent as "elicitation_failed".
type Elicitor interface {
	Elicit(ctx context.Context, r ElicitRequest) (ElicitResult, error)
}

// ElicitorFunc adapts a function to an Elicitor.
type ElicitorFunc func(ctx context.Context, r ElicitRequest) (ElicitResult, error)

// Elicit calls f.
func (f ElicitorFunc) Elicit(ctx context.Context, r ElicitRequest) (ElicitResult, error) {
	return f(ctx, r)
}

// Field returns the field named name.
func (s ElicitSchema) Field(name string) (ElicitField, bool) {
	for _, f := range s.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return ElicitField{}, false
}

// Defaults returns every field's default, keyed by field name (an empty,
// non-nil map when no field has one): the answer a host gives to accept a
// form as the server proposed it.
func (s ElicitSchema) Defaults() map[string]any { return s.WithDefaults(nil) }

// WithDefaults returns a copy of content with the default of every field
// content omits (or holds as nil) filled in; content is not modified.
// Keys that name no field are copied as they are (Validate refuses them).
func (s ElicitSchema) WithDefaults(content map[string]any) map[string]any {
	out := make(map[string]any, len(s.Fields))
	for k, v := range content {
		out[k] = v
	}
	for _, f := range s.Fields {
		if v, ok := out[f.Name]; (!ok || v == nil) && f.Default != nil {
			if ms, ok := f.Default.([]string); ok {
				out[f.Name] = slices.Clone(ms)
			} else {
				out[f.Name] = f.Default
			}
		}
	}
	return out
}

// ElicitContentError says why an answer does not fit its form. Reason is
// a stable lower_snake_case word; Field is the field's name ("" for the
// answer as a whole).
type ElicitContentError struct {
	Field  string
	Reason string
}

// Reasons of ElicitContentError.
const (
	ReasonElicitFieldUnknown  = "field_unknown"
	ReasonElicitFieldMissing  = "field_missing"
	ReasonElicitWrongType     = "wrong_type"
	ReasonElicitNotAnOption   = "not_an_option"
	ReasonElicitOutOfRange    = "out_of_range"
	ReasonElicitBadLength     = "bad_length"
	ReasonElicitBadFormat     = "bad_format"
	ReasonElicitDuplicate     = "duplicate_option"
	ReasonElicitInvalidString = "invalid_string"
)

func (e *ElicitContentError) Error() string {
	if e.Field == "" {
		return "elicitation answer: " + e.Reason
	}
	return fmt.Sprintf("elicitation answer: field %q: %s", e.Field, e.Reason)
}

// Validate checks an accepted answer against the form: every key names a
// field, every required field is present and every value fits its field.
// It returns nil or an *ElicitContentError.
func (s ElicitSchema) Validate(content map[string]any) error {
	for k := range content {
		if _, ok := s.Field(k); !ok {
			return &ElicitContentError{Field: k, Reason: ReasonElicitFieldUnknown}
		}
	}
	for _, f := range s.Fields {
		v, ok := content[f.Name]
		if !ok || v == nil {
			if f.Required {
				return &ElicitContentError{Field: f.Name, Reason: ReasonElicitFieldMissing}
			}
			continue
		}
		if err := f.Check(v); err != nil {
			return err
		}
	}
	return nil
}

// Check checks one value against the field and returns nil or an
// *ElicitContentError naming the field.
func (f ElicitField) Check(v any) error {
	fail := func(reason string) error { return &ElicitContentError{Field: f.Name, Reason: reason} }
	switch f.Type {
	case FieldString:
		s, ok := v.(string)
		if !ok {
			return fail(ReasonElicitWrongType)
		}
		if !utf8.ValidString(s) {
			return fail(ReasonElicitInvalidString)
		}
		if len(f.Options) > 0 {
			if !f.hasOption(s) {
				return fail(ReasonElicitNotAnOption)
			}
			return nil
		}
		n := utf8.RuneCountInString(s)
		if (f.MinLength != nil && n < *f.MinLength) || (f.MaxLength != nil && n > *f.MaxLength) {
			return fail(ReasonElicitBadLength)
		}
		if !formatOK(f.Format, s) {
			return fail(ReasonElicitBadFormat)
		}
	case FieldNumber, FieldInteger:
		x, ok := number(v)
		if !ok || math.IsNaN(x) || math.IsInf(x, 0) {
			return fail(ReasonElicitWrongType)
		}
		if f.Type == FieldInteger && x != math.Trunc(x) {
			return fail(ReasonElicitWrongType)
		}
		if (f.Minimum != nil && x < *f.Minimum) || (f.Maximum != nil && x > *f.Maximum) {
			return fail(ReasonElicitOutOfRange)
		}
	case FieldBoolean:
		if _, ok := v.(bool); !ok {
			return fail(ReasonElicitWrongType)
		}
	case FieldMultiSelect:
		var items []string
		switch xs := v.(type) {
		case []string:
			items = xs
		case []any:
			for _, x := range xs {
				s, ok := x.(string)
				if !ok {
					return fail(ReasonElicitWrongType)
				}
				items = append(items, s)
			}
		default:
			return fail(ReasonElicitWrongType)
		}
		seen := make(map[string]bool, len(items))
		for _, s := range items {
			if !f.hasOption(s) {
				return fail(ReasonElicitNotAnOption)
			}
			if seen[s] {
				return fail(ReasonElicitDuplicate)
			}
			seen[s] = true
		}
		if (f.MinItems != nil && len(items) < *f.MinItems) || (f.MaxItems != nil && len(items) > *f.MaxItems) {
			return fail(ReasonElicitBadLength)
		}
	default:
		return fail(ReasonElicitWrongType)
	}
	return nil
}

func (f ElicitField) hasOption(s string) bool {
	for _, o := range f.Options {
		if o.Value == s {
			return true
		}
	}
	return false
}

// number reads v as a float64 when it is a Go number or a json.Number.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int8:
		return float64(x), true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint8:
		return float64(x), true
	case uint16:
		return float64(x), true
	case uint32:
		return float64(x), true
	case uint64:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// formatOK reports whether s has format (one of the Format constants, or
// "" for any string).
func formatOK(format, s string) bool {
	switch format {
	case "":
		return true
	case FormatEmail:
		a, err := mail.ParseAddress(s)
		return err == nil && a.Name == "" && a.Address == s
	case FormatURI:
		u, err := url.Parse(s)
		return err == nil && u.Scheme != ""
	case FormatDate:
		_, err := time.Parse(time.DateOnly, s)
		return err == nil
	case FormatDateTime:
		_, err := time.Parse(time.RFC3339, s)
		return err == nil
	}
	return false
}
