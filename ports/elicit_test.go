package ports

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ptr[T any](v T) *T { return &v }

func TestElicitFieldCheck(t *testing.T) {
	str := ElicitField{Name: "s", Type: FieldString, MinLength: ptr(2), MaxLength: ptr(3)}
	opt := ElicitField{Name: "o", Type: FieldString, Options: []ElicitOption{{Value: "a"}, {Value: "b"}}}
	mail := ElicitField{Name: "e", Type: FieldString, Format: FormatEmail}
	uri := ElicitField{Name: "u", Type: FieldString, Format: FormatURI}
	date := ElicitField{Name: "d", Type: FieldString, Format: FormatDate}
	dt := ElicitField{Name: "t", Type: FieldString, Format: FormatDateTime}
	num := ElicitField{Name: "n", Type: FieldNumber, Minimum: ptr(0.5), Maximum: ptr(2.0)}
	integer := ElicitField{Name: "i", Type: FieldInteger}
	boolean := ElicitField{Name: "b", Type: FieldBoolean}
	multi := ElicitField{Name: "m", Type: FieldMultiSelect, Options: []ElicitOption{{Value: "x"}, {Value: "y"}}, MaxItems: ptr(1)}
	tests := []struct {
		name   string
		f      ElicitField
		v      any
		reason string
	}{
		{"string ok", str, "abc", ""},
		{"string short", str, "a", ReasonElicitBadLength},
		{"string long by runes", str, "éééé", ReasonElicitBadLength},
		{"string runes count", str, "éé", ""},
		{"string wrong type", str, 5, ReasonElicitWrongType},
		{"string invalid utf8", str, "\xff\xfe", ReasonElicitInvalidString},
		{"option ok", opt, "b", ""},
		{"not an option", opt, "c", ReasonElicitNotAnOption},
		{"email ok", mail, "a@example.com", ""},
		{"email with name", mail, "A <a@example.com>", ReasonElicitBadFormat},
		{"uri ok", uri, "https://example.com/x", ""},
		{"uri relative", uri, "/x", ReasonElicitBadFormat},
		{"date ok", date, "2026-12-03", ""},
		{"date bad", date, "03/12/2026", ReasonElicitBadFormat},
		{"date-time ok", dt, "2026-12-03T10:00:00Z", ""},
		{"date-time bad", dt, "2026-12-03", ReasonElicitBadFormat},
		{"number ok", num, 1.5, ""},
		{"number int type", num, 1, ""},
		{"number json.Number", num, json.Number("2"), ""},
		{"number below", num, 0.1, ReasonElicitOutOfRange},
		{"number above", num, 3, ReasonElicitOutOfRange},
		{"number string", num, "1", ReasonElicitWrongType},
		{"integer ok", integer, 3.0, ""},
		{"integer fraction", integer, 3.5, ReasonElicitWrongType},
		{"boolean ok", boolean, false, ""},
		{"boolean string", boolean, "true", ReasonElicitWrongType},
		{"multi ok", multi, []string{"x"}, ""},
		{"multi any ok", multi, []any{"y"}, ""},
		{"multi too many", multi, []string{"x", "y"}, ReasonElicitBadLength},
		{"multi duplicate", ElicitField{Name: "m", Type: FieldMultiSelect, Options: multi.Options}, []string{"x", "x"}, ReasonElicitDuplicate},
		{"multi not an option", multi, []string{"z"}, ReasonElicitNotAnOption},
		{"multi wrong item", multi, []any{1}, ReasonElicitWrongType},
		{"unknown type", ElicitField{Name: "z", Type: "object"}, map[string]any{}, ReasonElicitWrongType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.f.Check(tt.v)
			if tt.reason == "" {
				assert.NoError(t, err)
				return
			}
			var ce *ElicitContentError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tt.reason, ce.Reason)
			assert.Equal(t, tt.f.Name, ce.Field)
		})
	}
}

func TestElicitSchemaDefaultsAndValidate(t *testing.T) {
	s := ElicitSchema{Fields: []ElicitField{
		{Name: "age", Type: FieldInteger, Default: 30.0},
		{Name: "name", Type: FieldString, Required: true},
		{Name: "tags", Type: FieldMultiSelect, Options: []ElicitOption{{Value: "a"}}, Default: []string{"a"}},
		{Name: "ok", Type: FieldBoolean},
	}}
	defs := s.Defaults()
	assert.Equal(t, map[string]any{"age": 30.0, "tags": []string{"a"}}, defs)
	defs["tags"].([]string)[0] = "changed"
	assert.Equal(t, []string{"a"}, s.Fields[2].Default, "Defaults copies a multi-select default")

	in := map[string]any{"name": "x", "age": nil}
	out := s.WithDefaults(in)
	assert.Equal(t, map[string]any{"name": "x", "age": 30.0, "tags": []string{"a"}}, out)
	assert.Equal(t, map[string]any{"name": "x", "age": nil}, in, "content is not modified")
	assert.NoError(t, s.Validate(out))

	var ce *ElicitContentError
	require.ErrorAs(t, s.Validate(s.Defaults()), &ce)
	assert.Equal(t, ElicitContentError{Field: "name", Reason: ReasonElicitFieldMissing}, *ce)
	require.ErrorAs(t, s.Validate(map[string]any{"name": "x", "extra": 1}), &ce)
	assert.Equal(t, ElicitContentError{Field: "extra", Reason: ReasonElicitFieldUnknown}, *ce)
	assert.Contains(t, ce.Error(), "field_unknown")
	assert.NotNil(t, ElicitSchema{}.Defaults())
}

func TestRootSet(t *testing.T) {
	var zero RootSet
	l, err := zero.List(context.Background())
	require.NoError(t, err)
	assert.Empty(t, l)

	s := NewRootSet(Root{URI: "file:///a"})
	var calls atomic.Int32
	cancel := s.Subscribe(func() { calls.Add(1) })
	s.Set(Root{URI: "file:///a"})
	assert.Zero(t, calls.Load(), "the same roots are no change")
	s.Set(Root{URI: "file:///b", Name: "b"})
	assert.Equal(t, int32(1), calls.Load())
	l, _ = s.List(context.Background())
	assert.Equal(t, []Root{{URI: "file:///b", Name: "b"}}, l)
	l[0].URI = "changed"
	l, _ = s.List(context.Background())
	assert.Equal(t, "file:///b", l[0].URI, "List returns a copy")
	cancel()
	cancel()
	s.Set()
	assert.Equal(t, int32(1), calls.Load(), "no call after cancel")
}
