"""Deterministic pictures for the kit's inputs: rendered text lines and pages
(Debian's fonts), synthetic scenes, crops of photographs. Every function
takes a numpy RandomState, so a seed gives the same picture on every run of
the same Debian (PIL and FreeType from Debian: python3-pil).
"""

import os

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

# (path, Debian package): the Latin fonts and one with the Chinese characters
# that the PP-OCR dictionary holds
LATIN_FONTS = [
    ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "fonts-dejavu-core"),
    ("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf", "fonts-dejavu-core"),
    ("/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf", "fonts-dejavu-core"),
    ("/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf", "fonts-dejavu-core"),
    ("/usr/share/fonts/truetype/liberation2/LiberationSans-Regular.ttf", "fonts-liberation2"),
    ("/usr/share/fonts/truetype/liberation2/LiberationSerif-Italic.ttf", "fonts-liberation2"),
    ("/usr/share/fonts/truetype/liberation2/LiberationMono-Bold.ttf", "fonts-liberation2"),
]
CJK_FONT = ("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc", "fonts-wqy-microhei")

WORDS = ("invoice total amount date number page order price quantity address "
         "street city phone email name account balance due paid receipt tax "
         "model quantize memory device sample output layer weight scale report "
         "January March October Monday Friday Berlin Paris Tokyo Shanghai").split()


def check_fonts():
    missing = sorted({pkg for path, pkg in LATIN_FONTS + [CJK_FONT] if not os.path.exists(path)})
    if missing:
        raise SystemExit("realmodels: fonts missing: apt-get install " + " ".join(missing))


_font_cache = {}


def font(path, size):
    key = (path, size)
    if key not in _font_cache:
        _font_cache[key] = ImageFont.truetype(path, size)
    return _font_cache[key]


def cjk_chars(keys):
    """The dictionary's CJK Unified Ideographs (all in wqy-microhei): the
    rare-character set draws from these, rare and traditional forms included."""
    return [k for k in keys if len(k) == 1 and 0x4E00 <= ord(k) <= 0x9FA5]


def common_cjk(keys):
    """GB2312's level-1 characters (the 3755 in everyday use, rows 0xB0-0xD7)
    that the dictionary holds: what real Chinese text is made of."""
    have = set(keys)
    out = []
    for row in range(0xB0, 0xD8):
        for col in range(0xA1, 0xFF):
            try:
                ch = bytes([row, col]).decode("gb2312")
            except UnicodeDecodeError:   # row 0xD7 ends at 0xF9
                continue
            if ch in have:
                out.append(ch)
    return out


# Words of the kind receipts, signs and forms carry (all GB2312 level 1)
CJK_WORDS = ("发票 金额 日期 合计 数量 单价 地址 电话 姓名 账户 余额 收据 税额 型号 内存 "
             "设备 样本 输出 报告 北京 上海 广州 天津 中国 人民 银行 公司 有限 责任 学校 "
             "医院 超市 商品 价格 时间 星期 今天 明天 服务 中心 欢迎 光临 出口 入口 注意 "
             "安全 禁止 吸烟 停车 营业 工作 手机 号码 邮编 订单 支付 现金 总计 编号 名称 "
             "规格 单位 备注 会员 折扣 优惠 门店 地铁 车站 大学 图书馆 办公室 市场 经理 "
             "客户 产品 质量 生产 销售 学生 老师 电脑 网络 系统 文件 数据 开始 结束").split()


def cjk_line(rng, chars):
    """Chinese text: real words (with a number, a date or an amount now and
    then), or random everyday characters. chars: common_cjk()."""
    if rng.rand() < 0.5:
        words = [CJK_WORDS[rng.randint(len(CJK_WORDS))] for _ in range(rng.randint(2, 5))]
        r = rng.rand()
        if r < 0.25:
            words.append(f"{rng.randint(1, 1000)}.{rng.randint(0, 100):02d}元")
        elif r < 0.45:
            words.append(f"{rng.randint(2000, 2031)}年{rng.randint(1, 13)}月"
                         f"{rng.randint(1, 29)}日")
        elif r < 0.6:
            words.append(str(rng.randint(10, 100000)))
        return "".join(words)
    s = "".join(chars[rng.randint(len(chars))] for _ in range(rng.randint(4, 11)))
    if rng.rand() < 0.4:
        s += str(rng.randint(10, 2000))
    return s


def random_text(rng, cjk, rare=False):
    """A short line: Latin words and numbers, or Chinese text, about what fits
    a 48x320 recognizer input. cjk: common_cjk() (real words or everyday
    characters); with rare, cjk_chars() drawn from uniformly (the kit's first
    held-out set: rare and traditional characters that FP32 misreads)."""
    if cjk and rng.rand() < 0.5:
        if rare:
            n = rng.randint(4, 11)
            s = "".join(cjk[rng.randint(len(cjk))] for _ in range(n))
            if rng.rand() < 0.4:
                s += str(rng.randint(10, 2000))
        else:
            s = cjk_line(rng, cjk)
        return s, CJK_FONT[0]
    parts = []
    while sum(len(p) + 1 for p in parts) < rng.randint(8, 20):
        r = rng.rand()
        if r < 0.65:
            w = WORDS[rng.randint(len(WORDS))]
            parts.append(w.capitalize() if rng.rand() < 0.3 else w)
        elif r < 0.85:
            parts.append(str(rng.randint(0, 100000)))
        else:
            parts.append(f"{rng.randint(1, 999)}.{rng.randint(0, 99):02d}")
    s = " ".join(parts)
    if rng.rand() < 0.3:
        s += rng.choice([":", ",", ".", "%", "$"])
    return s, LATIN_FONTS[rng.randint(len(LATIN_FONTS))][0]


def _colors(rng):
    bg = int(rng.randint(170, 256))
    fg = int(rng.randint(0, 90))
    tint = rng.randint(-20, 21, size=3)
    bgc = tuple(int(np.clip(bg + t, 0, 255)) for t in tint)
    fgc = tuple(int(np.clip(fg + t, 0, 255)) for t in rng.randint(-20, 21, size=3))
    return bgc, fgc


def add_noise(img, rng, sigma):
    a = np.asarray(img).astype(np.float32)
    a += rng.randn(*a.shape).astype(np.float32) * sigma
    return Image.fromarray(np.clip(a, 0, 255).astype(np.uint8))


def text_line(rng, cjk, rare=False, max_aspect=None):
    """One text line on its background, cropped to the text with a margin,
    slightly rotated, blurred or noisy. Returns (RGB image, text). cjk and
    rare: as random_text's. With max_aspect, texts whose crop would be wider
    than max_aspect times its height are drawn again: PaddleOCR widens the
    recognizer's input to the widest line of a batch, it never squeezes one
    into a fixed width, as a fixed-shape input would."""
    while True:
        text, fpath = random_text(rng, cjk, rare)
        size = int(rng.randint(18, 44))
        f = font(fpath, size)
        bgc, fgc = _colors(rng)
        x0, y0, x1, y1 = f.getbbox(text)
        w, h = x1 - x0, y1 - y0
        pad = int(size * rng.uniform(0.15, 0.5))
        if max_aspect is None or w + 2 * pad <= max_aspect * (h + 2 * pad):
            break
    img = Image.new("RGB", (w + 2 * pad, h + 2 * pad), bgc)
    ImageDraw.Draw(img).text((pad - x0, pad - y0), text, font=f, fill=fgc)
    angle = rng.uniform(-3, 3)
    img = img.rotate(angle, resample=Image.BICUBIC, expand=True, fillcolor=bgc)
    if rng.rand() < 0.3:
        img = img.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 1.0)))
    img = add_noise(img, rng, rng.uniform(0, 12))
    return img, text


def text_page(rng, cjk, size):
    """A page of text lines at varied sizes, fonts, colours and small angles.
    Returns (RGB image, list of texts)."""
    W, H = size
    bgc, _ = _colors(rng)
    page = Image.new("RGB", (W, H), bgc)
    texts = []
    y = int(rng.randint(5, 40))
    while y < H - 30:
        text, fpath = random_text(rng, cjk, rare=True)
        fs = int(rng.randint(14, 40))
        f = font(fpath, fs)
        _, fgc = _colors(rng)
        x0, y0, x1, y1 = f.getbbox(text)
        line = Image.new("RGBA", (x1 - x0 + 8, y1 - y0 + 8), (0, 0, 0, 0))
        ImageDraw.Draw(line).text((4 - x0, 4 - y0), text, font=f, fill=fgc + (255,))
        line = line.rotate(rng.uniform(-4, 4), resample=Image.BICUBIC, expand=True)
        x = int(rng.randint(5, max(6, W - line.width // 2)))
        page.paste(line, (x, y), line)
        texts.append(text)
        y += line.height + int(rng.randint(4, 40))
    if rng.rand() < 0.5:
        page = page.filter(ImageFilter.GaussianBlur(rng.uniform(0.2, 0.8)))
    return add_noise(page, rng, rng.uniform(0, 10)), texts


def scene(rng, size):
    """A synthetic scene: textured background, one to three filled shapes in
    the foreground (what a salient-object model should pick out)."""
    W, H = size
    gy, gx = np.mgrid[0:H, 0:W].astype(np.float32)
    c0, c1 = rng.randint(0, 256, size=3), rng.randint(0, 256, size=3)
    t = (gx * rng.uniform(-1, 1) + gy * rng.uniform(-1, 1)) / (W + H) + 0.5
    bg = c0[None, None, :] * (1 - t[..., None]) + c1[None, None, :] * t[..., None]
    bg += rng.randn(H // 16 + 1, W // 16 + 1, 3).repeat(16, 0).repeat(16, 1)[:H, :W] * 12
    img = Image.fromarray(np.clip(bg, 0, 255).astype(np.uint8))
    d = ImageDraw.Draw(img)
    for _ in range(rng.randint(1, 4)):
        cx, cy = rng.uniform(0.2, 0.8) * W, rng.uniform(0.2, 0.8) * H
        r = rng.uniform(0.1, 0.3) * min(W, H)
        col = tuple(int(v) for v in rng.randint(0, 256, size=3))
        kind = rng.randint(3)
        if kind == 0:
            d.ellipse([cx - r, cy - r * rng.uniform(0.5, 1.2), cx + r,
                       cy + r * rng.uniform(0.5, 1.2)], fill=col)
        elif kind == 1:
            n = rng.randint(3, 8)
            ang = np.sort(rng.uniform(0, 2 * np.pi, n))
            rad = r * rng.uniform(0.5, 1.0, n)
            d.polygon([(cx + a * np.cos(b), cy + a * np.sin(b)) for a, b in zip(rad, ang)],
                      fill=col)
        else:
            d.rounded_rectangle([cx - r, cy - r * 0.6, cx + r, cy + r * 0.6],
                                radius=int(r * 0.2), fill=col)
    return add_noise(img, rng, rng.uniform(0, 8))


def line_drawing(rng, size):
    """Straight edges for a line-segment detector: rectangles and lines."""
    W, H = size
    bgc, _ = _colors(rng)
    img = Image.new("RGB", (W, H), bgc)
    d = ImageDraw.Draw(img)
    for _ in range(rng.randint(4, 12)):
        col = tuple(int(v) for v in rng.randint(0, 160, size=3))
        x0, y0 = rng.uniform(0, W), rng.uniform(0, H)
        x1, y1 = rng.uniform(0, W), rng.uniform(0, H)
        if rng.rand() < 0.5:
            d.line([x0, y0, x1, y1], fill=col, width=int(rng.randint(1, 5)))
        else:
            d.rectangle([min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)],
                        outline=col, width=int(rng.randint(1, 4)))
    return add_noise(img, rng, rng.uniform(0, 8))


def photo_crop(rng, photo, size, center=None, scale=(0.4, 1.0)):
    """A square crop of a photograph (around center, if given), resized to
    size, sometimes mirrored, brightness changed."""
    W, H = photo.size
    side = int(min(W, H) * rng.uniform(*scale))
    if center is None:
        x = rng.randint(0, W - side + 1)
        y = rng.randint(0, H - side + 1)
    else:
        cx = center[0] + rng.uniform(-0.15, 0.15) * side
        cy = center[1] + rng.uniform(-0.15, 0.15) * side
        x = int(np.clip(cx - side / 2, 0, W - side))
        y = int(np.clip(cy - side / 2, 0, H - side))
    img = photo.convert("RGB").crop((x, y, x + side, y + side)).resize(size, Image.BILINEAR)
    if rng.rand() < 0.5:
        img = img.transpose(Image.FLIP_LEFT_RIGHT)
    a = np.asarray(img).astype(np.float32) * rng.uniform(0.8, 1.2) + rng.uniform(-15, 15)
    return Image.fromarray(np.clip(a, 0, 255).astype(np.uint8))


# ---- a rendered hand (the kit has no photograph of a bare hand) ------------

# A few skin tones (RGB), from light to dark
SKIN = [(236, 198, 170), (224, 172, 138), (198, 140, 100), (160, 108, 72),
        (112, 74, 50), (245, 214, 190)]


def hand(rng, size, background=None):
    """A hand drawn with PIL: a palm (rounded polygon) and five fingers of
    three segments each (capsules, some bent or curled), in a skin tone with
    a darker outline, lit from one side, on a background (a photograph's
    crop, given, or a gradient), blurred and noised a little. Seen from the
    palm or the back, rotated, wrist to fingertip 50-70% of the side. Returns the
    picture and the 21 points it drew (MediaPipe's order: wrist, then thumb,
    index, middle, ring, pinky from base to tip), in pixels of size.
    Drawn 2026-11-29 for handlandmark_lite; not a photograph: the kit says so."""
    S = 3 * size[0]                                  # drawn 3x, then scaled down
    if background is None:
        a = np.linspace(0, 1, S)[None, :, None] * (rng.uniform(0, 255, 3) -
                                                   rng.uniform(0, 255, 3)) + rng.uniform(0, 255, 3)
        bg = Image.fromarray(np.clip(np.broadcast_to(a, (S, S, 3)), 0, 255).astype(np.uint8))
    else:
        bg = background.convert("RGB").resize((S, S), Image.BILINEAR)
    img = bg.copy()
    d = ImageDraw.Draw(img)
    skin = np.array(SKIN[rng.randint(len(SKIN))], np.float64) * rng.uniform(0.85, 1.1)
    edge = tuple(int(v) for v in np.clip(skin * 0.6, 0, 255))
    L = S * rng.uniform(0.3, 0.42)                   # wrist to tip: 1.66 L
    theta = rng.uniform(-0.6, 0.6) + (np.pi if rng.rand() < 0.1 else 0.0)
    cx, cy = S / 2 + rng.uniform(-0.1, 0.1) * S, S / 2 + rng.uniform(-0.1, 0.1) * S
    side = 1.0 if rng.rand() < 0.5 else -1.0         # left or right hand (thumb side)
    rot = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])

    def P(u, v):                                     # hand frame: u across, v up
        return tuple(np.array([cx, cy]) + rot @ np.array([u * side, -v]) * L)
    wrist = (0.0, -0.75)
    mcp = [(-0.33, 0.0), (-0.11, 0.05), (0.11, 0.03), (0.31, -0.03)]  # index .. pinky
    lengths = [0.78, 0.86, 0.8, 0.62]
    width = 0.16 * L
    pts = [P(*wrist)]
    fingers = []
    # thumb: from the palm's side near the wrist, outwards
    base = np.array([-0.3, -0.45])
    ang = np.pi * 0.5 + rng.uniform(0.5, 1.0)        # pointing up and out
    chain = [base]
    for seg in (0.3, 0.25, 0.2):
        chain.append(chain[-1] + seg * np.array([np.cos(ang), np.sin(ang)]))
        ang -= rng.uniform(0.0, 0.35)
    fingers.append(chain)
    for (u, v), ln in zip(mcp, lengths):
        ang = np.pi / 2 - u * rng.uniform(0.3, 1.0) + rng.uniform(-0.1, 0.1)
        curl = rng.uniform(0.0, 1.3) if rng.rand() < 0.3 else rng.uniform(0.0, 0.25)
        chain = [np.array([u, v])]
        for k, seg in enumerate((0.42, 0.32, 0.26)):
            chain.append(chain[-1] + seg * ln * np.array([np.cos(ang), np.sin(ang)]))
            ang -= curl * (1 if k == 0 else 0.8)
        fingers.append(chain)
    for chain in fingers:
        pts += [P(*p) for p in chain]
    # palm: the wrist, the thumb's base and the four knuckles
    palm = [P(-0.22, -0.8), P(0.22, -0.8), P(0.4, -0.3), P(0.4, 0.0), P(0.2, 0.1),
            P(-0.05, 0.12), P(-0.3, 0.08), P(-0.45, -0.2), P(-0.35, -0.55)]
    fill = tuple(int(v) for v in np.clip(skin, 0, 255))
    d.polygon(palm, fill=fill, outline=edge)
    d.line(palm + [palm[0]], fill=edge, width=max(1, int(width * 0.08)), joint="curve")
    for chain in fingers:
        q = [P(*p) for p in chain]
        w = width * (1.15 if chain is fingers[0] else 1.0)
        for a, b in zip(q, q[1:]):
            d.line([a, b], fill=edge, width=int(w + 2 * max(1, w * 0.08)))
            for c in (a, b):
                r = (w + 2 * max(1, w * 0.08)) / 2
                d.ellipse([c[0] - r, c[1] - r, c[0] + r, c[1] + r], fill=edge)
        for a, b in zip(q, q[1:]):
            d.line([a, b], fill=fill, width=int(w))
            for c in (a, b):
                d.ellipse([c[0] - w / 2, c[1] - w / 2, c[0] + w / 2, c[1] + w / 2], fill=fill)
            w *= 0.92
    # light from one side over the whole picture, a little blur and noise
    light = np.linspace(rng.uniform(0.75, 1.0), rng.uniform(1.0, 1.2), S)
    a = np.asarray(img, np.float64) * (light[None, :, None] if rng.rand() < 0.5
                                       else light[:, None, None])
    img = Image.fromarray(np.clip(a, 0, 255).astype(np.uint8))
    img = img.filter(ImageFilter.GaussianBlur(rng.uniform(0.5, 2.0))).resize(size, Image.BILINEAR)
    img = add_noise(img, rng, rng.uniform(0, 6))
    return img, [(x * size[0] / S, y * size[1] / S) for x, y in pts]
