package shaders

// Regenerate the SPIR-V in spv/ (and spv/manifest.txt) after editing a .comp or
// .glsl file or the variant list in internal/build. Needs glslc (shaderc).
// The IQ grid tables (iq3_grids.glsl, iq_grids.glsl) come first, from core/quant's tables.
//go:generate go run ./internal/gengrids -quant ../core/quant -out .
//go:generate go run ./internal/gen -src . -out spv
