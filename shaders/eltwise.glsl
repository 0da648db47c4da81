// eltwise.glsl: element types and careful float math for the elementwise
// family (eltwise_*.comp).
//
// Element type: the including shader defines one of TYPE_F32, TYPE_F16 or
// TYPE_BF16 to use these (the math below needs none):
//
//   ELT_T          the storage type of an element (float or uint16_t)
//   elt_load(e)    the f32 value of element e (exact)
//   elt_store(f)   f rounded to the element type with the CPU reference's
//                  rules (round to nearest even; f16 overflow to infinity;
//                  NaN stays NaN)
//
// Math: transcendental functions written out with range reduction and
// polynomials instead of GLSL's built-ins, whose required precision in Vulkan
// is loose (sin/cos: 2^-11 absolute and nothing for large arguments; tanh:
// derived from exp, so it cancels near 0 and may give NaN for large arguments;
// exp: undefined on overflow). exp, expm1, log, tanh, sin, cos, sigmoid and
// silu are within about 2 ulp of the correctly rounded value over the whole
// float range, softplus and gelu_erf within a few (backends/vulkan's
// TestEltwiseAccuracy measures it); gelu and gelu_quick add the rounding of
// their f32 inner products. NaN propagates and
// the infinities follow C's rules.

#ifndef TANDEM_ELTWISE_GLSL
#define TANDEM_ELTWISE_GLSL

#if defined(TYPE_F16) || defined(TYPE_BF16)
#extension GL_EXT_shader_16bit_storage : require
#endif

#define ELT_NAN uintBitsToFloat(0x7fc00000u)
#define ELT_INF uintBitsToFloat(0x7f800000u)

// elt_f16_bits rounds f to the nearest half (ties to even), as core/quant's
// FP32ToFP16: NaN keeps its top payload bits, |f| >= 2^16 becomes infinity,
// half subnormals are rounded, tiny values become (signed) zero.
uint elt_f16_bits(float f) {
    uint b = floatBitsToUint(f);
    uint sign = (b >> 16) & 0x8000u;
    uint a = b & 0x7fffffffu;
    if (a >= 0x38800000u && a < 0x47800000u) {
        return sign | (((a + 0x0fffu + ((a >> 13) & 1u)) >> 13) - (112u << 10));
    }
    if (a > 0x7f800000u) {
        return sign | 0x7e00u | ((a >> 13) & 0x3ffu);
    }
    if (a >= 0x47800000u) {
        return sign | 0x7c00u;
    }
    if (a >= 0x33000000u) {
        uint e = a >> 23;
        uint m = (a & 0x7fffffu) | 0x800000u;
        uint shift = 126u - e;
        return sign | ((m + ((1u << (shift - 1u)) - 1u) + ((m >> shift) & 1u)) >> shift);
    }
    return sign;
}

// elt_bf16_bits rounds f to bfloat16 as core/quant's FP32ToBF16 (ggml's rule).
uint elt_bf16_bits(float f) {
    uint b = floatBitsToUint(f);
    if ((b & 0x7fffffffu) > 0x7f800000u) {
        return (b >> 16) | 0x40u;
    }
    return (b + 0x7fffu + ((b >> 16) & 1u)) >> 16;
}

// (Macros: with 16-bit storage alone, 16-bit values cannot be function
// arguments or results.)
#if defined(TYPE_F32)
#define ELT_T float
#define elt_load(v) (v)
#define elt_store(v) (v)
#elif defined(TYPE_F16)
#define ELT_T uint16_t
#define elt_load(v) unpackHalf2x16(uint(v)).x
#define elt_store(v) uint16_t(elt_f16_bits(v))
#elif defined(TYPE_BF16)
#define ELT_T uint16_t
#define elt_load(v) uintBitsToFloat(uint(v) << 16)
#define elt_store(v) uint16_t(elt_bf16_bits(v))
#endif

// elt_pow2i returns 2^k for -126 <= k <= 127 (callers split other exponents).
float elt_pow2i(int k) {
    return uintBitsToFloat(uint(k + 127) << 23);
}

// elt_exp: e^x. Cody-Waite reduction x = k ln2 + r, |r| <= ln2/2, and a
// degree-7 polynomial (Cephes expf) for e^r.
float elt_exp(float x) {
    if (isnan(x)) {
        return x;
    }
    if (x > 88.72283935546875) {
        return ELT_INF;
    }
    if (x < -103.972084045410) {
        return 0.0;
    }
    precise float k = floor(x * 1.44269504088896341 + 0.5);
    precise float r = (x - k * 0.693359375) - k * -2.12194440e-4;
    precise float r2 = r * r;
    precise float p = 1.9875691500e-4;
    p = p * r + 1.3981999507e-3;
    p = p * r + 8.3334519073e-3;
    p = p * r + 4.1665795894e-2;
    p = p * r + 1.6666665459e-1;
    p = p * r + 5.0000001201e-1;
    precise float y = p * r2 + r + 1.0;
    int ki = int(k);
    if (ki > 127) {
        return y * 2.0 * elt_pow2i(ki - 1);
    }
    if (ki < -126) {
        // Subnormal result (may flush to zero on devices without denormals).
        return y * elt_pow2i(ki + 64) * 5.42101086242752217e-20;
    }
    return y * elt_pow2i(ki);
}

// elt_expm1: e^x - 1 without cancellation near 0 (Taylor series for
// |x| < 0.5; its first omitted term is below 3e-10 relative).
float elt_expm1(float x) {
    if (abs(x) < 0.5) {
        precise float p = 1.0 / 362880.0;
        p = p * x + 1.0 / 40320.0;
        p = p * x + 1.0 / 5040.0;
        p = p * x + 1.0 / 720.0;
        p = p * x + 1.0 / 120.0;
        p = p * x + 1.0 / 24.0;
        p = p * x + 1.0 / 6.0;
        p = p * x + 0.5;
        precise float y = (p * x) * x + x;
        return y;
    }
    return elt_exp(x) - 1.0;
}

// elt_log: ln x (fdlibm's logf reduction: x = 2^e (1+f), sqrt(2)/2 <= 1+f <
// sqrt(2), log(1+f) = f - f^2/2 + s (f^2/2 + R(s^2)), s = f/(2+f)).
float elt_log(float x) {
    // The sign is read from the bits: a device that flushes denormals compares a negative
    // denormal as -0 (not < 0), while its bits still carry the sign and a huge exponent field.
    uint b = floatBitsToUint(x);
    if (isnan(x)) {
        return ELT_NAN;
    }
    if ((b & 0x7fffffffu) == 0u) {
        return -ELT_INF; // +0 or -0
    }
    if ((b & 0x80000000u) != 0u) {
        return ELT_NAN; // x < 0, a negative denormal included
    }
    if (isinf(x)) {
        return x;
    }
    int e = 0;
    if (b < 0x00800000u) {
        // Subnormal: x = b * 2^-149, and float(b) is exact and normal. Converting the integer
        // keeps the value where a device that flushes denormals would flush x * 2^25 to 0 (an
        // H200 gave -inf for log(1e-40) that way).
        b = floatBitsToUint(float(b));
        e = -149;
    }
    e += int(b >> 23) - 127;
    b = (b & 0x007fffffu) | 0x3f800000u; // m in [1, 2)
    if (b > 0x3fb504f3u) {               // m > sqrt(2): halve it
        b -= 0x00800000u;
        e += 1;
    }
    precise float f = uintBitsToFloat(b) - 1.0;
    precise float s = f / (2.0 + f);
    precise float z = s * s;
    precise float w = z * z;
    precise float t1 = w * (4.0000972152e-01 + w * 2.4279078841e-01);
    precise float t2 = z * (6.6666662693e-01 + w * 2.8498786688e-01);
    precise float R = t2 + t1;
    precise float hfsq = 0.5 * f * f;
    float fe = float(e);
    precise float y = fe * 6.9313812256e-01 + (f - (hfsq - (s * (hfsq + R) + fe * 9.0580006145e-06)));
    return y;
}

// elt_tanh: tanh x = expm1(2|x|) / (expm1(2|x|) + 2) with x's sign; 1 beyond 9.
float elt_tanh(float x) {
    float a = abs(x);
    if (a > 9.0) {
        return x > 0.0 ? 1.0 : -1.0;
    }
    float e = elt_expm1(2.0 * a);
    float t = e / (e + 2.0);
    return x < 0.0 ? -t : t;
}

// sin and cos: the argument is reduced to r in [-pi/4, pi/4] and a quadrant n
// (x = n pi/2 + r), then Cephes sinf/cosf's polynomials on [-pi/4, pi/4] apply.
// For |x| <= 3 the reduction is Cephes' (pi/4 in three parts whose products are
// exact; its 3-part pi loses relative accuracy near larger multiples of pi);
// beyond it, Payne-Hanek: the exact product of x's 24-bit significand with a
// 96-bit window of 2/pi's bits, in 32-bit integer words, leaving 62 fraction bits.
float elt_sin_poly(float x, float z) {
    precise float p = -1.9515295891e-4;
    p = p * z + 8.3321608736e-3;
    p = p * z - 1.6666654611e-1;
    precise float y = p * z * x + x;
    return y;
}

float elt_cos_poly(float z) {
    precise float p = 2.443315711809948e-5;
    p = p * z - 1.388731625493765e-3;
    p = p * z + 4.166664568298827e-2;
    precise float y = p * z * z - 0.5 * z + 1.0;
    return y;
}

// Bits of 2/pi after the binary point, most significant first.
const uint ELT_TWO_OVER_PI[8] = uint[8](0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u,
                                        0xdb629599u, 0x3c439041u, 0xfe5163abu, 0xdebbc561u);

// elt_two_over_pi_bits returns the 32 bits of 2/pi starting at bit i (0: the
// first bit after the point; negative i: leading zeros), -32 < i < 224.
uint elt_two_over_pi_bits(int i) {
    if (i < 0) {
        return ELT_TWO_OVER_PI[0] >> uint(-i);
    }
    uint w = uint(i) >> 5u;
    uint b = uint(i) & 31u;
    uint hi = ELT_TWO_OVER_PI[w];
    if (b == 0u) {
        return hi;
    }
    uint lo = w + 1u < 8u ? ELT_TWO_OVER_PI[w + 1u] : 0u;
    return (hi << b) | (lo >> (32u - b));
}

// elt_reduce_large reduces a finite a >= 2^-6: returns r, sets the quadrant n.
float elt_reduce_large(float a, out uint n) {
    uint bits = floatBitsToUint(a);
    int e = int(bits >> 23) - 127;      // a = m 2^(e-23), m a 24-bit integer
    uint m = (bits & 0x7fffffu) | 0x800000u;
    // a 2/pi = m W 2^-94 modulo 4 with W = the 96 bits of 2/pi from bit e-25:
    // earlier bits only add multiples of 4, later ones less than 2^-70.
    int at = e - 25;
    uint w2 = elt_two_over_pi_bits(at);
    uint w1 = elt_two_over_pi_bits(at + 32);
    uint w0 = elt_two_over_pi_bits(at + 64);
    uint h0, l0, h1, l1, h2, l2;
    umulExtended(m, w0, h0, l0);
    umulExtended(m, w1, h1, l1);
    umulExtended(m, w2, h2, l2);
    uint c1, c2;
    uint p1 = uaddCarry(h0, l1, c1);
    uint p2 = uaddCarry(h1, l2, c2);
    uint c2b;
    p2 = uaddCarry(p2, c1, c2b);
    // Bits 94, 95 of the product (p2's top two) are the quadrant; the 62 bits
    // below them, (p2 & 0x3fffffff):p1, the fraction.
    n = p2 >> 30;
    uint fh = p2 & 0x3fffffffu;
    uint fl = p1;
    bool neg = false;
    if ((fh & 0x20000000u) != 0u) { // fraction >= 1/2: the next quadrant, fraction - 1
        n += 1u;
        neg = true;
        uint borrow = fl != 0u ? 1u : 0u;
        fl = 0u - fl;
        fh = 0x40000000u - fh - borrow;
    }
    n &= 3u;
    float f = float(fh) * 9.31322574615478516e-10 + float(fl) * 2.16840434497100887e-19; // 2^-30, 2^-62
    float r = f * 1.57079632679489662;
    return neg ? -r : r;
}

// elt_reduce_pio2 returns r for a finite a >= 0 and sets its quadrant n.
float elt_reduce_pio2(float a, out uint n) {
    if (a > 3.0) {
        return elt_reduce_large(a, n);
    }
    uint q = uint(a * 1.27323954473516); // 4/pi
    q += q & 1u;
    n = (q >> 1u) & 3u;
    precise float y = float(q);
    precise float r = ((a - y * 0.78515625) - y * 2.4187564849853515625e-4) - y * 3.77489497744594108e-8;
    return r;
}

float elt_sin(float x) {
    if (isnan(x) || isinf(x)) {
        return ELT_NAN;
    }
    uint n;
    float r = elt_reduce_pio2(abs(x), n);
    float z = r * r;
    float y = (n & 1u) != 0u ? elt_cos_poly(z) : elt_sin_poly(r, z);
    if ((n & 2u) != 0u) {
        y = -y;
    }
    return x < 0.0 ? -y : y;
}

float elt_cos(float x) {
    if (isnan(x) || isinf(x)) {
        return ELT_NAN;
    }
    uint n;
    float r = elt_reduce_pio2(abs(x), n);
    float z = r * r;
    float y = (n & 1u) != 0u ? elt_sin_poly(r, z) : elt_cos_poly(z);
    return ((n + 1u) & 2u) != 0u ? -y : y;
}

// The activations, with the CPU reference's formulas (ggml-cpu/vec.h).

// elt_x_sigmoid returns x / (1 + e^-t) = x sigmoid(t). Where e^-t would
// overflow while the result is still a normal number it is x e^t, computed
// as (x e^(t/2)) e^(t/2) so that no factor underflows early.
float elt_x_sigmoid(float x, float t) {
    if (t >= -80.0 || isnan(t)) {
        return x / (1.0 + elt_exp(-t));
    }
    float h = elt_exp(0.5 * t);
    return (x * h) * h;
}

float elt_sigmoid(float x) {
    return x >= -80.0 || isnan(x) ? 1.0 / (1.0 + elt_exp(-x)) : elt_exp(x);
}

float elt_silu(float x) { return elt_x_sigmoid(x, x); }

float elt_gelu_quick(float x) { return elt_x_sigmoid(x, 1.702 * x); }

// elt_gelu: 0.5 x (1 + tanh(z)), z = sqrt(2/pi) x (1 + 0.044715 x^2), written
// as x sigmoid(2z), which is the same function without the cancellation of
// 1 + tanh(z) for negative x (the CPU reference's float64 still has it below
// x = -6: there its tiny results are less accurate than these).
float elt_gelu(float x) {
    precise float z = 0.79788456080286535588 * x * (1.0 + 0.044715 * x * x);
    return elt_x_sigmoid(x, 2.0 * z);
}

// elt_log1p_pos: ln(1+y) for y >= 0 (or NaN), without losing y's low bits
// when 1+y rounds: ln(u) * y/(u-1), u = 1+y (the rounding error of u cancels
// to first order in the ratio).
float elt_log1p_pos(float y) {
    precise float u = 1.0 + y;
    if (u == 1.0) {
        return y;
    }
    precise float d = u - 1.0;
    precise float r = elt_log(u) * (y / d);
    return r;
}

// elt_softplus: ln(1+e^x), x itself above 20 (the CPU reference's cut-over).
float elt_softplus(float x) {
    return x > 20.0 ? x : elt_log1p_pos(elt_exp(x));
}

// elt_phi_neg: Phi(-a) = erfc(a/sqrt(2))/2 for a >= 0, the standard normal
// tail, by the Chebyshev fit erfc(z) = t exp(-z^2 + P(t)), t = 1/(1+z/2)
// (fractional error below 1.2e-7 for every z >= 0). z^2 = a^2/2 is formed
// exactly as hi + lo (Veltkamp's split of a into 12-bit halves; fma is not
// reliably fused on every driver), so the exponential adds no error that
// grows with a. Beyond a = 14 the tail is below the smallest float: 0.
float elt_phi_neg(float a) {
    if (a > 14.0) {
        return 0.0;
    }
    precise float z = a * 0.70710678118654752440;
    precise float t = 1.0 / (1.0 + 0.5 * z);
    precise float q = 0.17087277;
    q = q * t - 0.82215223;
    q = q * t + 1.48851587;
    q = q * t - 1.13520398;
    q = q * t + 0.27886807;
    q = q * t - 0.18628806;
    q = q * t + 0.09678418;
    q = q * t + 0.37409196;
    q = q * t + 1.00002368;
    q = q * t - 1.26551223;
    precise float c = a * 4097.0;
    precise float ah = c - (c - a);
    precise float al = a - ah;
    precise float hi = a * a;
    precise float lo = ((ah * ah - hi) + 2.0 * ah * al) + al * al;
    precise float r = 0.5 * t * elt_exp(-0.5 * hi) * elt_exp(q - 0.5 * lo);
    return r;
}

// elt_gelu_erf: the exact gelu 0.5 x (1 + erf(x/sqrt(2))) = x Phi(x), with
// Phi(x) = Phi(-|x|) for x < 0 (no cancellation) and 1 - Phi(-x) otherwise.
// -inf gives NaN (-inf * 0), as the CPU reference.
float elt_gelu_erf(float x) {
    if (isnan(x)) {
        return x;
    }
    if (isinf(x)) {
        return x > 0.0 ? x : ELT_NAN;
    }
    float q = elt_phi_neg(abs(x));
    precise float y = x < 0.0 ? x * q : x * (1.0 - q);
    return y;
}

// elt_round: C's roundf, halves away from zero. x - trunc(x) is exact, so the
// comparison with 0.5 sees the true fraction (x + 0.5 would round up
// 0.49999997).
float elt_round(float x) {
    float t = trunc(x);
    precise float f = abs(x - t);
    if (f >= 0.5) {
        precise float r = t + (x < 0.0 ? -1.0 : 1.0);
        return r;
    }
    return t;
}

// elt_hardsigmoid: min(1, max(0, (x+3)/6)), NaN giving 0 (fmaxf's rule).
float elt_hardsigmoid(float x) {
    float t = (x + 3.0) / 6.0;
    if (!(t > 0.0)) {
        t = 0.0;
    }
    if (t > 1.0) {
        t = 1.0;
    }
    return t;
}

#endif // TANDEM_ELTWISE_GLSL
