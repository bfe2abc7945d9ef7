package catalog_test

import (
	"fmt"

	"github.com/mcpward/mcpward/core/catalog"
)

// A template's literal text fixes its origin; a variable may fill the
// path, never move the request to another host.
func ExampleURITemplate_ExpandSameOrigin() {
	tpl, _ := catalog.ParseURITemplate("https://api.example{/repo}{?q}")
	fmt.Println(tpl.Vars())
	u, reason := tpl.ExpandSameOrigin(map[string]string{"repo": "mcp", "q": "a b"})
	fmt.Printf("%q %q\n", u, reason)
	leaky, _ := catalog.ParseURITemplate("https://api.example{+path}")
	u, reason = leaky.ExpandSameOrigin(map[string]string{"path": ".evil.example/x"})
	fmt.Printf("%q %q\n", u, reason)
	// Output:
	// [repo q]
	// "https://api.example/mcp?q=a%20b" ""
	// "" "template_origin_mismatch"
}
