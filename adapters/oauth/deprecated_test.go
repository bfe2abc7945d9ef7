package oauth

import (
	"context"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDeprecatedNames: CrossApp and Client.SignInCrossApp, kept for one
// release, are EnterpriseManaged and Client.SignInEnterpriseManaged, the
// names the MCP specification gives the flow: the same type, and the
// same refusal for the same input. Removing one is a deliberate act: this
// test stops compiling.
func TestDeprecatedNames(t *testing.T) {
	assert.Equal(t, reflect.TypeFor[EnterpriseManaged](), reflect.TypeFor[CrossApp]())
	e := newEnv(t)
	for _, x := range []CrossApp{{}, {SubjectToken: "t", IdPTokenEndpoint: "http://idp.example/token"}, xaa(e)} {
		want := e.c.SignInEnterpriseManaged(context.Background(), e.as.server("want"), x)
		got := e.c.SignInCrossApp(context.Background(), e.as.server("want"), x)
		if want == nil {
			assert.NoError(t, got)
			continue
		}
		assert.Equal(t, want.Error(), got.Error())
	}
}
