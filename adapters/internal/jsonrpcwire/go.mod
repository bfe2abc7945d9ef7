module github.com/mcpward/mcpward/adapters/internal/jsonrpcwire

go 1.26

require (
	github.com/mcpward/mcpward/core v0.0.0
	github.com/modelcontextprotocol/go-sdk v1.8.0
	github.com/stretchr/testify v1.11.1
)

require (
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	golang.org/x/sys v0.41.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

replace (
	github.com/mcpward/mcpward/core => ../../../core
	github.com/mcpward/mcpward/ports => ../../../ports
)
