module github.com/tandem-ml/tandem

go 1.26.0

require (
	github.com/klauspost/cpuid/v2 v2.4.2
	github.com/vulkan-go/vulkan v0.0.0-20221209234627-c0a353ae26c8
	golang.org/x/sync v0.24.0
	gonum.org/v1/gonum v0.17.0
)

require (
	github.com/go-gl/gl v0.0.0-20231021071112-07e5d0ea2e71 // indirect
	golang.org/x/sys v0.41.0 // indirect
)
