import { Global, Module } from '@nestjs/common';
import { CursorCodec } from './cursor/cursor-codec';

@Global()
@Module({ providers: [CursorCodec], exports: [CursorCodec] })
export class CommonModule {}
