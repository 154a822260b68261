import mongoose from 'mongoose';

/**
 * Large blobs (voice, images, charts) live in GridFS (DESIGN §2); workflows carry only the
 * file id, far below Temporal's payload limit.
 */
const BUCKET = 'media';

function bucket(): mongoose.mongo.GridFSBucket {
  const db = mongoose.connection.db;
  if (!db) throw new Error('MongoDB is not connected');
  return new mongoose.mongo.GridFSBucket(db, { bucketName: BUCKET });
}

export interface StoredMedia {
  fileId: string;
  length: number;
}

/** Stores a blob; `id` makes the write idempotent (a retried activity reuses its file). */
export async function putMedia(
  data: Buffer,
  meta: { filename: string; mime?: string; id?: string },
): Promise<StoredMedia> {
  const id = meta.id ?? new mongoose.mongo.ObjectId().toHexString();
  if (meta.id) {
    const existing = await findMedia(meta.id);
    if (existing) return { fileId: id, length: existing.length };
  }
  await new Promise<void>((resolve, reject) => {
    const upload = bucket().openUploadStreamWithId(id as unknown as mongoose.mongo.ObjectId, meta.filename, {
      metadata: { mime: meta.mime ?? 'application/octet-stream' },
    });
    upload.once('error', reject).once('finish', () => resolve());
    upload.end(data);
  });
  return { fileId: id, length: data.length };
}

async function findMedia(fileId: string): Promise<{ length: number; filename: string; mime?: string } | undefined> {
  const [file] = await bucket()
    .find({ _id: fileId as unknown as mongoose.mongo.ObjectId })
    .limit(1)
    .toArray();
  if (!file) return undefined;
  return { length: file.length, filename: file.filename, mime: (file.metadata as { mime?: string } | undefined)?.mime };
}

/** The blob and what it was stored as; throws when it does not exist. */
export async function getMedia(fileId: string): Promise<{ data: Buffer; filename: string; mime?: string }> {
  const file = await findMedia(fileId);
  if (!file) throw new Error(`media ${fileId} not found`);
  const chunks: Buffer[] = [];
  for await (const chunk of bucket().openDownloadStream(fileId as unknown as mongoose.mongo.ObjectId)) {
    chunks.push(chunk as Buffer);
  }
  return { data: Buffer.concat(chunks), filename: file.filename, mime: file.mime };
}
