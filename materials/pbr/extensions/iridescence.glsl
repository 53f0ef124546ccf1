// extensions/iridescence.glsl - KHR_materials_iridescence: thin-film interference
// (Belcour & Barla 2017, as given in the extension's specification). The
// thin-film Fresnel replaces Schlick's Fresnel, weighted by the iridescence factor.
#ifndef PBR_EXT_IRIDESCENCE_GLSL
#define PBR_EXT_IRIDESCENCE_GLSL

#include "../surface.glsl"

// Only IRIDESCENCE code calls what follows: gone when IRIDESCENCE is statically 0.
#if !defined(IRIDESCENCE) || IRIDESCENCE

// CIE XYZ -> linear Rec.709 primaries.
const mat3 XYZ_TO_REC709 = mat3(
     3.2404542, -0.9692660,  0.0556434,
    -1.5371385,  1.8760108, -0.2040259,
    -0.4985314,  0.0415560,  1.0572252);

// Fourier transform of the spectral sensitivity of the XYZ matching functions,
// evaluated at the optical path difference (nm) with a phase shift per channel.
vec3 iridescenceSensitivity(float opd, vec3 shift)
{
    float phase = 2.0 * M_PI * opd * 1.0e-9;
    vec3 val = vec3(5.4856e-13, 4.4201e-13, 5.2481e-13);
    vec3 pos = vec3(1.6810e+06, 1.7953e+06, 2.2084e+06);
    vec3 var = vec3(4.3278e+09, 9.3046e+09, 6.6121e+09);
    vec3 xyz = val * sqrt(2.0 * M_PI * var) * cos(pos * phase + shift) * exp(-phase * phase * var);
    xyz.x += 9.7470e-14 * sqrt(2.0 * M_PI * 4.5282e+09) * cos(2.2399e+06 * phase + shift.x)
           * exp(-4.5282e+09 * phase * phase);
    return XYZ_TO_REC709 * (xyz / 1.0685e-7);
}

// Reflectance of air / thin film (filmIor, thickness nm) / base layer (baseF0).
vec3 thinFilmFresnel(float outsideIor, float filmIor, float cosTheta1, float thickness, vec3 baseF0)
{
    // The film fades in over its first nanometers so thickness 0 is the bare base.
    float eta2 = mix(outsideIor, filmIor, smoothstep(0.0, 0.03, thickness));
    float sinTheta2Sq = sq(outsideIor / eta2) * (1.0 - sq(cosTheta1));
    float cosTheta2Sq = 1.0 - sinTheta2Sq;
    if (cosTheta2Sq < 0.0)
        return vec3(1.0);   // total internal reflection
    float cosTheta2 = sqrt(cosTheta2Sq);

    // First interface: outside -> film.
    float r0 = iorToF0(eta2, outsideIor);
    float r12 = F_Schlick(r0, 1.0, cosTheta1);
    float t121 = 1.0 - r12;
    float phi12 = eta2 < outsideIor ? M_PI : 0.0;
    float phi21 = M_PI - phi12;

    // Second interface: film -> base.
    vec3 baseIor = f0ToIor(clamp(baseF0, vec3(0.0), vec3(0.9999)));
    vec3 r1 = iorToF0(baseIor, eta2);
    vec3 r23 = F_Schlick(r1, vec3(1.0), cosTheta2);
    vec3 phi23 = vec3(baseIor.x < eta2 ? M_PI : 0.0,
                      baseIor.y < eta2 ? M_PI : 0.0,
                      baseIor.z < eta2 ? M_PI : 0.0);

    float opd = 2.0 * eta2 * thickness * cosTheta2;
    vec3 phi = vec3(phi21) + phi23;

    vec3 r123 = clamp(r12 * r23, 1e-5, 0.9999);
    vec3 sqrtR123 = sqrt(r123);
    vec3 rs = sq(t121) * r23 / (vec3(1.0) - r123);

    vec3 reflectance = r12 + rs;   // m = 0
    vec3 cm = rs - t121;
    for (int m = 1; m <= 2; ++m)
    {
        cm *= sqrtR123;
        reflectance += cm * 2.0 * iridescenceSensitivity(float(m) * opd, float(m) * phi);
    }
    return max(reflectance, vec3(0.0));
}

void loadIridescence(inout Surface s)
{
    s.iridescence = material.iridescenceFactor;
    s.iridescenceIor = material.iridescenceIor;
    s.iridescenceThickness = material.iridescenceThicknessMax;
    if (slotUsed(SLOT_IRIDESCENCE))
        s.iridescence *= sampleSlot(iridescenceTexture, SLOT_IRIDESCENCE).r;
    if (slotUsed(SLOT_IRIDESCENCE_THICKNESS))
    {
        float t = sampleSlot(iridescenceThicknessTexture, SLOT_IRIDESCENCE_THICKNESS).g;
        s.iridescenceThickness = mix(material.iridescenceThicknessMin, material.iridescenceThicknessMax, t);
    }
    // One evaluation at the view angle serves every light and the ambient term.
    s.iridescenceF0Dielectric = thinFilmFresnel(1.0, s.iridescenceIor, s.NdotV, s.iridescenceThickness, s.f0Dielectric);
    s.iridescenceF0Metal = thinFilmFresnel(1.0, s.iridescenceIor, s.NdotV, s.iridescenceThickness, s.baseColor);
}

#endif // IRIDESCENCE

#endif
