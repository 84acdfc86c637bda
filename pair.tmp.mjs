import sharp from 'sharp';
const [img, matte, out] = process.argv.slice(2);
const a = await sharp(img).resize(480, 270, {fit:'fill'}).toBuffer();
const b = await sharp(matte).resize(480, 270, {fit:'fill'}).toColourspace('srgb').toBuffer();
await sharp({create:{width:960,height:270,channels:3,background:'#000'}}).composite([{input:a,left:0,top:0},{input:b,left:480,top:0}]).png().toFile(out);
