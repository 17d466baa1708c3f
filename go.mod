module github.com/listwatch/listwatch

go 1.25.0

require (
	github.com/hashicorp/go-retryablehttp v0.7.8
	github.com/stretchr/testify v1.12.1
	github.com/tidwall/gjson v1.20.1
	go.uber.org/goleak v1.3.0
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/time v0.15.0
)

require (
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.2.0 // indirect
)
