import { randomBytes } from 'crypto';
import { getMedia, putMedia } from '../../store/media';
import { useMongo } from '../harness/mongo';

describe('media store (GridFS on the MongoDB-wire server)', () => {
  let mongo: Awaited<ReturnType<typeof useMongo>>;
  beforeAll(async () => {
    mongo = await useMongo();
  });
  afterAll(() => mongo.stop());

  it('stores and reads back a multi-chunk blob byte for byte', async () => {
    const data = randomBytes(600 * 1024 + 17); // > 2 chunks of 255 KiB
    const { fileId, length } = await putMedia(data, { filename: 'voice.ogg', mime: 'audio/ogg' });
    expect(length).toBe(data.length);
    const back = await getMedia(fileId);
    expect(back.data.equals(data)).toBe(true);
    expect(back).toMatchObject({ filename: 'voice.ogg', mime: 'audio/ogg' });
  });

  it('is idempotent for a given id: a retried write keeps the first blob', async () => {
    const first = await putMedia(Buffer.from('first'), { filename: 'a.png', mime: 'image/png', id: 'chart-x' });
    const again = await putMedia(Buffer.from('second'), { filename: 'a.png', mime: 'image/png', id: 'chart-x' });
    expect(again).toEqual(first);
    expect((await getMedia('chart-x')).data.toString()).toBe('first');
  });

  it('throws for an unknown id', async () => {
    await expect(getMedia('nope')).rejects.toThrow('media nope not found');
  });
});
