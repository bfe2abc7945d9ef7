module github.com/mcpward/mcpward/adapters/oauth

go 1.26

require (
	github.com/go-jose/go-jose/v4 v4.1.9
	github.com/mcpward/mcpward/conformance v0.0.0
	github.com/mcpward/mcpward/core v0.0.0
	github.com/mcpward/mcpward/ports v0.0.0
	github.com/stretchr/testify v1.11.1
	go.uber.org/goleak v1.3.0
	golang.org/x/oauth2 v0.35.0
)

require (
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

replace (
	github.com/mcpward/mcpward/conformance => ../../conformance
	github.com/mcpward/mcpward/core => ../../core
	github.com/mcpward/mcpward/ports => ../../ports
)
