#version 450
// eltwise_argmax.comp: for each row of an f32 matrix, the index of its largest
// element as i32, like the CPU reference: the first index wins ties, NaN is
// never the maximum, and a row without an element above -inf gives 0.
//
// Bindings: 0 = src (f32), 1 = dst (i32).
// Specialization: constant 0 = workgroup size (a power of two, default 256).
// Dispatch: x = any number of workgroups; workgroup w handles rows w,
// w + groups, ...

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Src { float data_a[]; };
layout(std430, binding = 1) writeonly buffer Dst { int data_d[]; };

layout(push_constant) uniform Params {
    uint ne0, nrows;
    uint nb00, nb01; // src strides (elements)
    uint nb0;        // dst stride (elements)
    uint offs_a, offs_d;
} p;

shared float sh_v[gl_WorkGroupSize.x];
shared uint sh_i[gl_WorkGroupSize.x];

void main() {
    uint tid = gl_LocalInvocationID.x;
    float NEG_INF = uintBitsToFloat(0xff800000u);
    for (uint r = gl_WorkGroupID.x; r < p.nrows; r += gl_NumWorkGroups.x) {
        float best = NEG_INF;
        uint idx = 0u;
        uint base = p.offs_a + r * p.nb01;
        for (uint j = tid; j < p.ne0; j += gl_WorkGroupSize.x) {
            float v = data_a[base + j * p.nb00];
            if (v > best) { // first of equal maxima (j increases); NaN never wins
                best = v;
                idx = j;
            }
        }
        sh_v[tid] = best;
        sh_i[tid] = idx;
        barrier();
        for (uint h = gl_WorkGroupSize.x / 2u; h > 0u; h >>= 1u) {
            if (tid < h) {
                float v = sh_v[tid + h];
                uint k = sh_i[tid + h];
                if (v > sh_v[tid] || (v == sh_v[tid] && k < sh_i[tid])) {
                    sh_v[tid] = v;
                    sh_i[tid] = k;
                }
            }
            barrier();
        }
        if (tid == 0u) {
            data_d[p.offs_d + r * p.nb0] = int(sh_i[0]);
        }
        barrier();
    }
}
