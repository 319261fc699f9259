import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiDataResponse, ApiKeyAuth, ApiProblems, VocabularySchema } from '../docs/openapi';
import { vocabulary } from '../labels/taxonomy';

@ApiTags('Labels')
@ApiKeyAuth()
@Controller('api/v1/labels')
export class VocabularyController {
  @Get('vocabulary')
  @ApiOperation({ summary: 'Every label token the listing filters accept (taxonomy v1.1)' })
  @ApiDataResponse(200, VocabularySchema)
  @ApiProblems()
  get() {
    return { data: vocabulary() };
  }
}
