package shaders

// Regenerate the SPIR-V in spv/ (and spv/manifest.txt) after editing a .comp or
// .glsl file or the variant list in internal/build. Needs glslc (shaderc).
//go:generate go run ./internal/gen -src . -out spv
