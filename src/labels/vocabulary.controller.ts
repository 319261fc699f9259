import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { vocabulary } from './taxonomy';

@ApiTags('Labels')
@ApiBearerAuth()
@Controller('api/v1/labels')
export class VocabularyController {
  @Get('vocabulary')
  @ApiOperation({ summary: 'Every label token the listing filters accept (taxonomy v1.1)' })
  get() {
    return { data: vocabulary() };
  }
}
