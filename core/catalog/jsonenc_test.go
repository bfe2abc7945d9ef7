package catalog

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAppendFloat(t *testing.T) {
	for _, f := range []float64{
		0, math.Copysign(0, -1), 1, -1, 0.1, 1e-6, 1e-7, 9.99999e-7, 1e20, 1e21, 123456789.125,
		math.MaxFloat64, math.SmallestNonzeroFloat64, -1.5e-300, 5e-324, 1 << 53,
	} {
		want, err := json.Marshal(f)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(appendFloat(nil, f)), "%v", f)
	}
}

func TestEncoderValueRefusals(t *testing.T) {
	deep := any("x")
	for range maxValueDepth + 1 {
		deep = []any{deep}
	}
	for name, v := range map[string]any{
		"NaN": math.NaN(), "Inf": math.Inf(-1), "bad json.Number": json.Number("1e400"),
		"NaN json.Number": json.Number("NaN"), "Inf json.Number": json.Number("-Infinity"),
		"int": 1, "func": func() {}, "too deep": deep,
		"invalid UTF-8 key": map[string]any{"\xff": 1}, "nested bad": map[string]any{"a": []any{1.0, math.NaN()}},
	} {
		var e encoder
		assert.False(t, e.value(v, 0), name)
		assert.Empty(t, e.keys, "%s: key stack not unwound", name)
	}
}

// FuzzEncodeValue checks the hand-written encoder against encoding/json:
// for any JSON document, writing its decoded value gives exactly the bytes
// json.Marshal gives (compact, sorted keys, same escaping and numbers).
func FuzzEncodeValue(f *testing.F) {
	for _, s := range []string{
		`null`, `true`, `"x<y>&\u2028"`, `1e21`, `-0`, `[1,"a",{"b":null}]`, `{"z":1,"a":{"y":[],"x":{}}}`,
		`"\ud800"`, `"\u0000\u001f"`, `0.000001`, `1e-7`, `{"":""}`, `"\xff"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		if json.Unmarshal(data, &v) != nil {
			return
		}
		want, err := json.Marshal(v)
		if err != nil {
			return
		}
		var e encoder
		if !e.value(v, 0) {
			// Only values nested past the bound are refused.
			return
		}
		require.Equal(t, string(want), string(e.buf))
	})
}
