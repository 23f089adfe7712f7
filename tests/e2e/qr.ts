// Reading a QR code the way a phone does in the browser tests: from the pixels the browser drew,
// optionally scaled down (a phone at the back of the room sees a small code), decoded by jsQR.
import jsqr from "jsqr";
import type { Browser } from "playwright-core";

// jsqr is CommonJS: its default import is the module, whose `default` is the decoder.
const jsQR = jsqr.default;

/** What the QR code in the PNG `png` says once drawn at `scale` of its size, or null. */
export async function decodeQrPng(
  browser: Browser,
  png: Uint8Array,
  { scale = 1 }: { scale?: number } = {},
): Promise<string | null> {
  const base64 = btoa(Array.from(png, (byte) => String.fromCharCode(byte)).join(""));
  // A blank page has no Content-Security-Policy, so it can draw the PNG from a data: address.
  const blank = await browser.newPage();
  try {
    const image = await blank.evaluate(async ([data, factor]) => {
      const img = new Image();
      img.src = `data:image/png;base64,${data}`;
      await img.decode();
      const canvas = document.createElement("canvas");
      canvas.width = Math.round(img.width * factor);
      canvas.height = Math.round(img.height * factor);
      const context = canvas.getContext("2d")!;
      context.drawImage(img, 0, 0, canvas.width, canvas.height);
      const { data: pixels, width, height } = context.getImageData(
        0,
        0,
        canvas.width,
        canvas.height,
      );
      return { pixels: Array.from(pixels), width, height };
    }, [base64, scale] as const);
    return jsQR(new Uint8ClampedArray(image.pixels), image.width, image.height)?.data ?? null;
  } finally {
    await blank.close();
  }
}
