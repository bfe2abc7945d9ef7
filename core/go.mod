module github.com/mcpward/mcpward/core

go 1.26

require github.com/mcpward/mcpward/ports v0.0.0

require (
	github.com/kr/text v0.2.0 // indirect
	go.uber.org/goleak v1.3.0
)

require (
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/stretchr/testify v1.11.1
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

replace github.com/mcpward/mcpward/ports => ../ports
