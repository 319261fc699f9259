import { Global, Module } from '@nestjs/common';
import { CursorCodec } from './cursor/cursor-codec';
import { KeysetPaging } from './paging/keyset-page';

@Global()
@Module({ providers: [CursorCodec, KeysetPaging], exports: [CursorCodec, KeysetPaging] })
export class CommonModule {}
