import { randomBytes } from 'node:crypto';
import { Readable, Transform } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { ByteRange, ExportStorage, StorageUpload } from './export-storage';

const PARTIAL = '.partial-';

export interface S3StorageOptions {
  bucket: string;
  /** An S3-compatible endpoint (path-style addressing); AWS S3 when absent. */
  endpoint?: string;
  region: string;
}

/**
 * Export files in an S3-compatible bucket, credentials from the AWS default chain. A file is
 * streamed as a multipart upload (parts of 8 MiB, so memory stays flat) to a temporary key,
 * checked (its size), then copied to its key and the temporary object deleted.
 */
export class S3ExportStorage implements ExportStorage {
  readonly kind = 's3' as const;
  readonly client: S3Client;

  constructor(private readonly options: S3StorageOptions) {
    this.client = new S3Client({
      region: options.region,
      ...(options.endpoint ? { endpoint: options.endpoint, forcePathStyle: true } : {}),
    });
  }

  async open(key: string): Promise<StorageUpload> {
    const temp = `${key}${PARTIAL}${randomBytes(6).toString('hex')}`;
    // lib-storage gathers the chunks it reads into 8 MiB parts: it gets copies, as the writer
    // reuses a chunk once written (StorageUpload.stream).
    const body = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        done(null, Buffer.from(chunk));
      },
    });
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.options.bucket, Key: temp, Body: body },
      partSize: 8 * 1024 * 1024,
      queueSize: 2,
      leavePartsOnError: false,
    });
    const done = upload.done();
    // A failed upload ends the writer with the error (the pipeline into it then fails).
    done.catch((error: Error) => body.destroy(error));
    const abort = async () => {
      await upload.abort().catch(() => undefined);
      await done.catch(() => undefined);
      await this.deleteObject(temp);
    };
    return {
      stream: body,
      abort,
      publish: async (expected) => {
        try {
          await done;
          const head = await this.client.send(
            new HeadObjectCommand({ Bucket: this.options.bucket, Key: temp }),
          );
          if (head.ContentLength !== expected.bytes)
            throw new Error(
              `export file check failed: ${head.ContentLength} bytes stored, ${expected.bytes} written`,
            );
          await this.client.send(
            new CopyObjectCommand({
              Bucket: this.options.bucket,
              Key: key,
              CopySource: `${this.options.bucket}/${encodeURIComponent(temp).replace(/%2F/g, '/')}`,
              MetadataDirective: 'REPLACE',
              Metadata: { sha256: expected.sha256 },
            }),
          );
          await this.deleteObject(temp);
        } catch (error) {
          await abort();
          throw error;
        }
      },
    };
  }

  async removePartials(key: string): Promise<void> {
    const prefix = `${key}${PARTIAL}`;
    const objects = await this.client.send(
      new ListObjectsV2Command({ Bucket: this.options.bucket, Prefix: prefix }),
    );
    for (const object of objects.Contents ?? []) if (object.Key) await this.deleteObject(object.Key);
    // Parts of an upload its writer died in the middle of.
    const uploads = await this.client
      .send(new ListMultipartUploadsCommand({ Bucket: this.options.bucket, Prefix: prefix }))
      .catch(() => ({ Uploads: [] }));
    for (const u of uploads.Uploads ?? [])
      await this.client
        .send(
          new AbortMultipartUploadCommand({ Bucket: this.options.bucket, Key: u.Key, UploadId: u.UploadId }),
        )
        .catch(() => undefined);
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    const answer = await this.client.send(
      new GetObjectCommand({
        Bucket: this.options.bucket,
        Key: key,
        ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
      }),
    );
    return answer.Body as Readable;
  }

  async remove(key: string): Promise<void> {
    await this.deleteObject(key);
  }

  private async deleteObject(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: key }));
  }
}
