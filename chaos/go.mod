module github.com/listwatch/listwatch/chaos

go 1.25.0

require (
	github.com/Shopify/toxiproxy/v2 v2.5.0
	github.com/listwatch/listwatch v0.0.0-00010101000000-000000000000
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
)

require (
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	github.com/hashicorp/go-retryablehttp v0.7.8 // indirect
	github.com/tidwall/gjson v1.20.1 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.2.0 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/time v0.15.0 // indirect
)

replace github.com/listwatch/listwatch => ../
