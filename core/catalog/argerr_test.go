package catalog

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDeclaredNames(t *testing.T) {
	assert.Equal(t, "it has none", declaredNames("it has", nil))
	assert.Equal(t, `it has "a"`, declaredNames("it has", []string{"a"}))
	assert.Equal(t, `it has "a", "b" and "c"`, declaredNames("it has", []string{"a", "b", "c"}))
	many := strings.Split("a b c d e f g h i j", " ")
	assert.Equal(t, `it has "a", "b", "c", "d", "e", "f", "g", "h" and 2 more`, declaredNames("it has", many))
	// A server's name is escaped and cut: no control character, bounded.
	got := declaredNames("it has", []string{"x\x1b[2J" + strings.Repeat("y", 500)})
	assert.NotContains(t, got, "\x1b")
	assert.Less(t, len(got), 100)
}
